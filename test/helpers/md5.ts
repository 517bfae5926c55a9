import { createHash } from 'node:crypto';

/** A message attribute as the SQS APIs carry it (JSON shape; Binary as raw bytes). */
export interface AttributeValue {
  readonly DataType?: string | undefined;
  readonly StringValue?: string | undefined;
  readonly BinaryValue?: Uint8Array | undefined;
}

export const md5Hex = (data: string | Uint8Array): string => createHash('md5').update(data).digest('hex');

/**
 * MD5OfMessageAttributes computed independently of the server, as SQS documents it: names sorted;
 * per attribute the length-prefixed name and type, a transport byte (1 string, 2 binary) and the
 * length-prefixed value.
 */
export function md5OfAttributes(attributes: Readonly<Record<string, AttributeValue>>): string {
  const parts: Buffer[] = [];
  const field = (bytes: Uint8Array) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, Buffer.from(bytes));
  };
  for (const name of Object.keys(attributes).sort()) {
    const value = attributes[name]!;
    const dataType = value.DataType ?? '';
    field(Buffer.from(name, 'utf8'));
    field(Buffer.from(dataType, 'utf8'));
    if (dataType.startsWith('Binary')) {
      parts.push(Buffer.from([2]));
      field(value.BinaryValue ?? new Uint8Array());
    } else {
      parts.push(Buffer.from([1]));
      field(Buffer.from(value.StringValue ?? '', 'utf8'));
    }
  }
  return md5Hex(Buffer.concat(parts));
}
