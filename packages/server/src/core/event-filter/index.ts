/**
 * The event filter: one matching engine for SNS subscription filter policies, Lambda event source mappings'
 * filter criteria (EventBridge's pattern syntax) and the console's message search. Each dialect validates with
 * its own limits and error texts; all compile to the same branches and match through the same search.
 */
export { type CompiledPattern, FieldRule, type PatternBranch } from './compiler.ts';
export {
  compileEventPattern,
  EventPattern,
  EventPatternError,
  FilterCriteriaError,
  INVALID_FILTER_PATTERN,
  LAMBDA_FILTERS_PER_EVENT_SOURCE,
  SqsFilterCriteria,
  WILDCARD_COMPLEXITY_LIMIT,
} from './event-pattern.ts';
export type { JsonObjectValue, JsonPrimitive, JsonValue } from './json-value.ts';
export { matchesPattern } from './matcher.ts';
export { MessageIndex } from './message-index.ts';
export {
  compileFilterPolicy,
  type FilterPolicyAction,
  FilterPolicyError,
  type FilterPolicyScope,
  parseFilterPolicyScope,
  SNS_FILTER_POLICY_LIMITS,
  SnsFilterPolicy,
  type SnsMessageAttribute,
  SnsPublication,
} from './sns-filter-policy.ts';
