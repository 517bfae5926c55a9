import { snsErrors } from './sns-errors.ts';
import type { SnsScope } from './sns-names.ts';
import { defaultTopicPolicy } from './topic-attributes.ts';

/** What AddPermission grants: a statement `label` letting `accounts` call `actions` on the topic. */
export interface TopicGrant {
  label: string | undefined;
  accounts: readonly string[];
  actions: readonly string[];
  topicArn: string;
}

interface PolicyDocument {
  Version?: string;
  Id?: string;
  Statement?: Array<Record<string, unknown>>;
}

const oneOrMany = (items: string[]): string | string[] => (items.length === 1 ? items[0]! : items);

const parse = (text: string): PolicyDocument => JSON.parse(text) as PolicyDocument;

/** The topic's Policy (SNS's default one when it has none) with a statement for `grant`. */
export function withTopicPermission(
  policyText: string | undefined,
  grant: TopicGrant,
  scope: SnsScope,
): string {
  const { label, accounts, actions, topicArn } = grant;
  if (label === undefined || label === '') throw snsErrors.invalidParameter('Label');
  if (accounts.length === 0) throw snsErrors.invalidParameter('AWSAccountId');
  if (actions.length === 0) throw snsErrors.invalidParameter('ActionName');
  const name = topicArn.slice(topicArn.lastIndexOf(':') + 1);
  const policy = parse(policyText || defaultTopicPolicy(scope, name));
  const statements = policy.Statement ?? [];
  if (statements.some((statement) => statement.Sid === label)) {
    throw snsErrors.invalidParameter('Statement already exists');
  }
  statements.push({
    Sid: label,
    Effect: 'Allow',
    // As AWS writes it (recorded: LocalStack's AWS-validated test_topic_add_multiple_permissions), and as
    // SQS's AddPermission does: one principal or action is a string, several a list.
    Principal: { AWS: oneOrMany(accounts.map((account) => `arn:aws:iam::${account}:root`)) },
    Action: oneOrMany(actions.map((action) => `SNS:${action}`)),
    Resource: topicArn,
  });
  return JSON.stringify({ ...policy, Statement: statements });
}

/** The Policy without statement `label` (unchanged when it has none). */
export function withoutTopicPermission(policyText: string | undefined, label: string): string | undefined {
  if (policyText === undefined || policyText === '') return policyText;
  const policy = parse(policyText);
  const statements = policy.Statement ?? [];
  const kept = statements.filter((statement) => statement.Sid !== label);
  return kept.length === statements.length ? policyText : JSON.stringify({ ...policy, Statement: kept });
}
