/**
 * Numbered migrations, applied in order at start by whichever node takes the migration lock first; the
 * table schema_migrations records each one applied. Never edit a released migration: add the next one.
 *
 * Times are epoch milliseconds (BIGINT); JSON values are kept as text, encoded as the SQLite store does,
 * so both stores read their rows with the same mappers (src/store/rows.ts). Names that are listed in
 * order use the "C" collation: byte order, as SQLite sorts them.
 */
export const MIGRATIONS: readonly string[] = [
  /* 1: queues, messages, FIFO groups and deduplication, receive attempts, fair tenants, move tasks, history */ `
  CREATE TABLE queues (
    id               BIGSERIAL PRIMARY KEY,
    name             TEXT COLLATE "C" NOT NULL UNIQUE,
    fifo             BOOLEAN NOT NULL,
    attributes       TEXT NOT NULL,
    tags             TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    last_modified_at BIGINT NOT NULL,
    last_purged_at   BIGINT
  );

  CREATE TABLE messages (
    seq                       BIGSERIAL PRIMARY KEY,
    queue_id                  BIGINT NOT NULL,
    message_id                TEXT NOT NULL,
    body                      TEXT NOT NULL,
    message_attributes        TEXT,
    system_attributes         TEXT,
    md5_of_body               TEXT NOT NULL,
    md5_of_message_attributes TEXT,
    md5_of_system_attributes  TEXT,
    sender_id                 TEXT NOT NULL,
    sent_at                   BIGINT NOT NULL,
    visible_at                BIGINT NOT NULL,
    expires_at                BIGINT NOT NULL,
    receive_count             INTEGER NOT NULL DEFAULT 0,
    first_received_at         BIGINT,
    receipt_token             TEXT,
    delivery_started_at       BIGINT,
    dead_letter_source_arn    TEXT,
    group_id                  TEXT COLLATE "C",
    deduplication_id          TEXT
  );
  CREATE INDEX messages_by_visibility ON messages (queue_id, visible_at, seq);
  CREATE INDEX messages_by_expiry ON messages (expires_at);
  CREATE INDEX messages_by_group ON messages (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
  CREATE INDEX messages_by_tenant ON messages (queue_id, group_id, visible_at, seq) WHERE group_id IS NOT NULL;

  CREATE TABLE deleted_queues (
    name       TEXT PRIMARY KEY,
    deleted_at BIGINT NOT NULL
  );

  -- One row per non-empty FIFO group: from when it can be received from. Its row lock is what serialises
  -- the group across nodes: receives take it (SKIP LOCKED), sends, deletes and visibility changes wait on it.
  CREATE TABLE fifo_groups (
    queue_id     BIGINT NOT NULL,
    group_id     TEXT COLLATE "C" NOT NULL,
    available_at BIGINT NOT NULL,
    PRIMARY KEY (queue_id, group_id)
  );
  CREATE INDEX fifo_groups_by_availability ON fifo_groups (queue_id, available_at);

  CREATE TABLE fifo_deduplication (
    queue_id         BIGINT NOT NULL,
    scope            TEXT NOT NULL,
    deduplication_id TEXT NOT NULL,
    message_id       TEXT NOT NULL,
    seq              BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL,
    PRIMARY KEY (queue_id, scope, deduplication_id)
  );
  CREATE INDEX fifo_deduplication_by_expiry ON fifo_deduplication (expires_at);

  CREATE TABLE receive_attempts (
    queue_id   BIGINT NOT NULL,
    attempt_id TEXT NOT NULL,
    claims     TEXT NOT NULL,   -- JSON [[seq, receipt token], ...]
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (queue_id, attempt_id)
  );
  CREATE INDEX receive_attempts_by_expiry ON receive_attempts (expires_at);

  CREATE TABLE fair_tenants (
    queue_id  BIGINT NOT NULL,
    tenant    TEXT COLLATE "C" NOT NULL,
    served_at BIGINT NOT NULL,
    PRIMARY KEY (queue_id, tenant)
  );
  CREATE INDEX fair_tenants_by_service ON fair_tenants (queue_id, served_at);
  -- Tenant turns, shared by every node.
  CREATE SEQUENCE fair_tenant_turns;

  CREATE TABLE move_tasks (
    handle          TEXT COLLATE "C" PRIMARY KEY,
    source_arn      TEXT NOT NULL,
    source_queue_id BIGINT NOT NULL,
    destination_arn TEXT,
    max_per_second  INTEGER,
    status          TEXT NOT NULL,
    moved           INTEGER NOT NULL DEFAULT 0,
    to_move         INTEGER NOT NULL,
    up_to_seq       BIGINT NOT NULL,
    started_at      BIGINT NOT NULL,
    ended_at        BIGINT,
    failure_reason  TEXT
  );
  CREATE INDEX move_tasks_by_source ON move_tasks (source_arn, started_at);
  CREATE UNIQUE INDEX move_tasks_one_active ON move_tasks (source_arn) WHERE status IN ('RUNNING', 'CANCELLING');

  CREATE TABLE queue_samples (
    queue          TEXT NOT NULL,
    at             BIGINT NOT NULL,
    period_ms      BIGINT NOT NULL,
    visible        BIGINT NOT NULL,
    not_visible    BIGINT NOT NULL,
    delayed        BIGINT NOT NULL,
    oldest_age_s   BIGINT NOT NULL,
    sent           BIGINT NOT NULL,
    received       BIGINT NOT NULL,
    deleted        BIGINT NOT NULL,
    empty_receives BIGINT NOT NULL,
    sent_bytes     BIGINT NOT NULL,
    PRIMARY KEY (queue, at)
  );
  CREATE INDEX queue_samples_by_time ON queue_samples (at);
  `,
  /* 2: leases: which node runs each cluster-wide job (retention, DLQ alarms, history, move tasks) */ `
  CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL   -- epoch ms on the database's clock
  );
  `,
  /* 3: activity every node adds and the history sampler takes, so the history counts the whole cluster */ `
  CREATE TABLE queue_activity (
    queue          TEXT PRIMARY KEY,
    sent           BIGINT NOT NULL,
    received       BIGINT NOT NULL,
    deleted        BIGINT NOT NULL,
    empty_receives BIGINT NOT NULL,
    sent_bytes     BIGINT NOT NULL
  );
  `,
  /* 4: documents the lease holder writes for every node to read (DLQ alarm states) */ `
  CREATE TABLE cluster_state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  /* 5: a FIFO group is available once its oldest message is visible (the first message in flight holds back
        the ones after it, not the ones before) */ `
  UPDATE fifo_groups g SET available_at = h.visible_at
  FROM (SELECT DISTINCT ON (queue_id, group_id) queue_id, group_id, visible_at FROM messages
        WHERE group_id IS NOT NULL ORDER BY queue_id, group_id, seq) h
  WHERE h.queue_id = g.queue_id AND h.group_id = g.group_id;
  `,
  /* 6: the audit trail of operators' replays, deletes, purges and move tasks (DLQ triage) */ `
  CREATE TABLE audit_log (
    id          BIGSERIAL PRIMARY KEY,
    at          BIGINT NOT NULL,
    actor       TEXT NOT NULL,
    via         TEXT NOT NULL,   -- console, cli or api
    action      TEXT NOT NULL,
    source      TEXT NOT NULL,
    destination TEXT,
    count       INTEGER NOT NULL,
    skipped     INTEGER NOT NULL,
    detail      TEXT
  );
  `,
  /* 7: a fair queue's tenant in a column of its own (its group id; NULL in a FIFO queue), so that FIFO rows
        stay out of the tenant index, which nothing reads them through */ `
  ALTER TABLE messages ADD COLUMN tenant TEXT COLLATE "C";
  UPDATE messages SET tenant = group_id
    WHERE group_id IS NOT NULL AND queue_id IN (SELECT id FROM queues WHERE NOT fifo);
  DROP INDEX messages_by_tenant;
  CREATE INDEX messages_by_tenant ON messages (queue_id, tenant, visible_at, seq) WHERE tenant IS NOT NULL;
  `,
  /* 8: a FIFO queue deduplicates in the scope it was created with, which a later SetQueueAttributes of
        DeduplicationScope does not change (SQS); queues made before take the scope they show */ `
  ALTER TABLE queues ADD COLUMN deduplicates_per_group BOOLEAN NOT NULL DEFAULT false;
  UPDATE queues SET deduplicates_per_group = true
    WHERE fifo AND attributes::jsonb ->> 'DeduplicationScope' = 'messageGroup';
  `,
  /* 9: audit entries of bounded size, kept for a retention period: what a replay changed (digests and
        sizes of a new body or attributes, as JSON) and the first messages acted on with their new ids (JSON);
        the time index the retention removes old entries by; and the selections copied whole before, cut */ `
  ALTER TABLE audit_log ADD COLUMN edit TEXT;
  ALTER TABLE audit_log ADD COLUMN messages TEXT;
  CREATE INDEX audit_log_by_time ON audit_log (at);
  UPDATE audit_log SET detail = substr(detail, 1, 500) || '…' WHERE length(detail) > 500;
  UPDATE audit_log SET actor = substr(actor, 1, 200) || '…' WHERE length(actor) > 200;
  `,
  /* 10: SNS topics, their subscriptions, and a FIFO topic's deduplication ids (docs/decisions/sns-topics.md);
         a FIFO topic's sequence numbers count up in its row */ `
  CREATE TABLE topics (
    name          TEXT COLLATE "C" PRIMARY KEY,
    fifo          BOOLEAN NOT NULL,
    attributes    TEXT NOT NULL,
    tags          TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_sequence BIGINT NOT NULL DEFAULT 0
  );
  CREATE TABLE subscriptions (
    arn        TEXT COLLATE "C" PRIMARY KEY,
    topic_name TEXT COLLATE "C" NOT NULL,
    protocol   TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    owner      TEXT NOT NULL,
    attributes TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE UNIQUE INDEX subscriptions_by_endpoint ON subscriptions (topic_name, protocol, endpoint);
  CREATE INDEX subscriptions_by_topic ON subscriptions (topic_name, arn);
  CREATE TABLE topic_deduplication (
    topic_name       TEXT COLLATE "C" NOT NULL,
    deduplication_id TEXT NOT NULL,
    message_id       TEXT NOT NULL,
    sequence_number  BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL,
    PRIMARY KEY (topic_name, deduplication_id)
  );
  `,
  /* 11: Lambda event source mappings, each the core's JSON document under its UUID, in creation order */ `
  CREATE TABLE event_source_mappings (
    id        BIGSERIAL PRIMARY KEY,
    uuid      TEXT NOT NULL UNIQUE,
    document  TEXT NOT NULL
  );
  `,
  /* 12: SNS deliveries to HTTP/HTTPS endpoints not yet answered 2xx, stored with the publication's queue
         deliveries; a node claims each with a row lock, moving due_at past its attempt
         (docs/decisions/sns-http-deliveries.md) */ `
  CREATE TABLE endpoint_deliveries (
    id               TEXT PRIMARY KEY,
    subscription_arn TEXT COLLATE "C" NOT NULL,
    topic_name       TEXT COLLATE "C" NOT NULL,
    endpoint         TEXT NOT NULL,
    message_id       TEXT NOT NULL,
    message_type     TEXT NOT NULL,
    body             TEXT NOT NULL,
    raw              BOOLEAN NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    due_at           BIGINT NOT NULL,
    created_at       BIGINT NOT NULL
  );
  CREATE INDEX endpoint_deliveries_by_due ON endpoint_deliveries (due_at);
  `,
  /* 13: an HTTP/HTTPS delivery's last failure (the status or the error's class, never the answer's body), and
         its deliveries listed per subscription for the operators (docs/guide/sns.md) */ `
  ALTER TABLE endpoint_deliveries ADD COLUMN last_error TEXT;
  CREATE INDEX endpoint_deliveries_by_subscription ON endpoint_deliveries (subscription_arn, due_at);
  `,
];
