import assert from 'node:assert/strict';
import { verify, X509Certificate } from 'node:crypto';

/** The JSON notification SNS puts on a queue (not raw delivery), as a subscriber parses it. */
export interface SnsEnvelope {
  Type: string;
  MessageId: string;
  SequenceNumber?: string;
  TopicArn: string;
  Subject?: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  UnsubscribeURL: string;
  MessageAttributes?: Record<string, { Type: string; Value: string }>;
}

/**
 * Checks a notification's signature as the SNS developer guide tells a subscriber to ("Verifying the
 * signatures of Amazon SNS messages"): fetch the certificate at SigningCertURL, build the canonical string of
 * a Notification (Message, MessageId, Subject when present, Timestamp, TopicArn, Type: each name, newline,
 * value, newline) and verify the base64 signature with RSA-SHA1 (version 1) or RSA-SHA256 (version 2).
 */
export async function assertSignatureVerifies(envelope: SnsEnvelope): Promise<void> {
  const response = await fetch(envelope.SigningCertURL);
  assert.equal(response.status, 200, `GET ${envelope.SigningCertURL}`);
  const certificate = new X509Certificate(await response.text());
  const names = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'] as const;
  const signed = names
    .filter((name) => envelope[name] !== undefined)
    .map((name) => `${name}\n${envelope[name]}\n`)
    .join('');
  const algorithm = { '1': 'sha1', '2': 'sha256' }[envelope.SignatureVersion];
  assert.ok(algorithm, `SignatureVersion ${envelope.SignatureVersion}`);
  assert.ok(
    verify(algorithm, Buffer.from(signed), certificate.publicKey, Buffer.from(envelope.Signature, 'base64')),
    'the signature verifies with the certificate served at SigningCertURL',
  );
}
