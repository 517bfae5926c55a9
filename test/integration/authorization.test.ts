import {
  ACTIONS,
  type ActionSpec,
  type Case,
  describeAuthorization,
  type Key,
  keyMayCall,
  ORDERS,
  PARTNER,
  SENDER,
  type Target,
  type World,
} from '../helpers/authorization.ts';

/**
 * Authorization acts on the queue the request touches, whatever the wire protocol: every action that names
 * a queue, called over both protocols (AWS JSON and Query) with a key limited to `orders*`, a key limited by
 * actions and a key of another account that a queue Policy lets in, on a queue each may use, on one it may
 * not, and through hostile QueueUrl forms that name one queue in the text after their last `/` and another in
 * their path. The other queue references (URL spellings, RedrivePolicy, RedriveAllowPolicy, move task ARNs,
 * list outputs) are in authorization-queue-references.test.ts; the harness in test/helpers/authorization.ts.
 */

/** A fresh queue the key may use (for the other account, one whose Policy lets it in), ready for `spec`. */
async function usableQueue(world: World, key: Key, spec: ActionSpec): Promise<Target> {
  const name = world.freshName(key === PARTNER ? 'public' : 'orders');
  if (spec.action === 'CreateQueue') return world.target(name);
  const target = key === PARTNER ? await world.createPublic(name) : await world.create(name);
  await spec.prepare?.(target, world);
  return target;
}

function everyActionCases(): Case[] {
  const cases: Case[] = [];
  for (const key of [ORDERS, SENDER, PARTNER]) {
    for (const spec of ACTIONS) {
      const allowed = keyMayCall(key, spec.action);
      cases.push({
        title: `${key.label}: ${spec.action} on a queue it may use → ${allowed ? 'ok' : 'AccessDenied'}`,
        key,
        action: spec.action,
        expect: allowed ? 'ok' : 'AccessDenied',
        input: async (world) => spec.input(await usableQueue(world, key, spec), world, allowed),
      });
      if (key === SENDER) continue; // it may use every queue: only its actions are limited
      cases.push({
        title: `${key.label}: ${spec.action} on a queue it may not use → AccessDenied`,
        key,
        action: spec.action,
        expect: 'AccessDenied',
        input: async (world) => spec.input(await world.protectedQueue(spec), world, false),
      });
      if ((spec.names ?? 'url') !== 'url') continue;
      // The attack of issue #22: the text after the last `/` names a queue the key may use, the path another.
      for (const [form, url] of [
        ['query string', (secret: Target, allowedName: string) => `${secret.url}?/${allowedName}`],
        ['fragment', (secret: Target, allowedName: string) => `${secret.url}#/${allowedName}`],
      ] as const) {
        // Refused as a missing queue: it is not a queue URL; an action the key may not call is refused first.
        const expect = allowed ? 'QueueDoesNotExist' : 'AccessDenied';
        cases.push({
          title: `${key.label}: ${spec.action} on a QueueUrl with a ${form} → ${expect}`,
          key,
          action: spec.action,
          expect,
          input: async (world) => {
            const allowedName = key === PARTNER ? world.public.name : 'orders-anything';
            const secret = await world.protectedQueue(spec);
            return { ...(await spec.input(secret, world, false)), QueueUrl: url(secret, allowedName) };
          },
        });
      }
    }
  }
  return cases;
}

describeAuthorization(() => everyActionCases());
