/**
 * Numbered migrations, applied in order at start; PRAGMA user_version records the last applied.
 * Never edit a released migration: add the next one.
 */
export const MIGRATIONS: readonly string[] = [
  /* 1: queues, messages, recently deleted queue names */ `
  CREATE TABLE queues (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT NOT NULL UNIQUE,
    fifo            INTEGER NOT NULL,
    attributes      TEXT NOT NULL,  -- JSON object of attribute name -> string value
    tags            TEXT NOT NULL,  -- JSON object of tag key -> value
    created_at      INTEGER NOT NULL,
    last_modified_at INTEGER NOT NULL,
    last_purged_at  INTEGER
  );

  CREATE TABLE messages (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    queue_id            INTEGER NOT NULL,
    message_id          TEXT NOT NULL,
    body                TEXT NOT NULL,
    message_attributes  TEXT,          -- JSON, binary values base64
    system_attributes   TEXT,          -- JSON, e.g. AWSTraceHeader
    md5_of_body         TEXT NOT NULL,
    md5_of_message_attributes TEXT,
    md5_of_system_attributes  TEXT,
    sender_id           TEXT NOT NULL,
    sent_at             INTEGER NOT NULL,
    visible_at          INTEGER NOT NULL,
    expires_at          INTEGER NOT NULL,
    receive_count       INTEGER NOT NULL DEFAULT 0,
    first_received_at   INTEGER,
    receipt_token       TEXT,
    delivery_started_at INTEGER,
    dead_letter_source_arn TEXT
  );
  -- Receives take the queue's messages in visibility order; counts and next-visible look-ups use it too.
  CREATE INDEX messages_by_visibility ON messages (queue_id, visible_at, seq);
  -- Retention sweeping.
  CREATE INDEX messages_by_expiry ON messages (expires_at);

  CREATE TABLE deleted_queues (
    name       TEXT PRIMARY KEY,
    deleted_at INTEGER NOT NULL
  );
  `,
  /* 2: FIFO groups and deduplication, receive attempts, fair-queue tenants */ `
  ALTER TABLE messages ADD COLUMN group_id TEXT;
  ALTER TABLE messages ADD COLUMN deduplication_id TEXT;
  -- A FIFO group's messages in order, and a fair-queue tenant's in visibility order.
  CREATE INDEX messages_by_group ON messages (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
  CREATE INDEX messages_by_tenant ON messages (queue_id, group_id, visible_at, seq) WHERE group_id IS NOT NULL;
  -- Until when a group's received messages stay in flight.
  CREATE INDEX messages_received_by_group ON messages (queue_id, group_id, visible_at)
    WHERE group_id IS NOT NULL AND receive_count > 0;

  -- One row per non-empty FIFO group: from when it can be received from, which is the later of its oldest
  -- message's visibility and the end of its last received message's visibility.
  CREATE TABLE fifo_groups (
    queue_id     INTEGER NOT NULL,
    group_id     TEXT NOT NULL,
    available_at INTEGER NOT NULL,
    PRIMARY KEY (queue_id, group_id)
  ) WITHOUT ROWID;
  CREATE INDEX fifo_groups_by_availability ON fifo_groups (queue_id, available_at);

  CREATE TABLE fifo_deduplication (
    queue_id         INTEGER NOT NULL,
    scope            TEXT NOT NULL,   -- the group id under DeduplicationScope=messageGroup, else ''
    deduplication_id TEXT NOT NULL,
    message_id       TEXT NOT NULL,
    seq              INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL,
    PRIMARY KEY (queue_id, scope, deduplication_id)
  ) WITHOUT ROWID;
  CREATE INDEX fifo_deduplication_by_expiry ON fifo_deduplication (expires_at);

  CREATE TABLE receive_attempts (
    queue_id   INTEGER NOT NULL,
    attempt_id TEXT NOT NULL,
    claims     TEXT NOT NULL,   -- JSON [[seq, receipt token], ...]
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (queue_id, attempt_id)
  ) WITHOUT ROWID;
  CREATE INDEX receive_attempts_by_expiry ON receive_attempts (expires_at);

  -- Tenants of a fair (standard) queue, '' standing for messages without a group; least recently served first.
  CREATE TABLE fair_tenants (
    queue_id  INTEGER NOT NULL,
    tenant    TEXT NOT NULL,
    served_at INTEGER NOT NULL,
    PRIMARY KEY (queue_id, tenant)
  ) WITHOUT ROWID;
  CREATE INDEX fair_tenants_by_service ON fair_tenants (queue_id, served_at);
  `,
  /* 3: message move tasks (DLQ redrive) */ `
  CREATE TABLE move_tasks (
    handle          TEXT PRIMARY KEY,
    source_arn      TEXT NOT NULL,
    source_queue_id INTEGER NOT NULL,
    destination_arn TEXT,
    max_per_second  INTEGER,
    status          TEXT NOT NULL,
    moved           INTEGER NOT NULL DEFAULT 0,
    to_move         INTEGER NOT NULL,
    up_to_seq       INTEGER NOT NULL,  -- the source's newest message when the task started
    started_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    failure_reason  TEXT
  ) WITHOUT ROWID;
  CREATE INDEX move_tasks_by_source ON move_tasks (source_arn, started_at);
  -- At most one active task per source, enforced by the database.
  CREATE UNIQUE INDEX move_tasks_one_active ON move_tasks (source_arn) WHERE status IN ('RUNNING', 'CANCELLING');
  `,
  /* 4: history samples of each queue, every 10 s for 24 h (console charts, sluice stats) */ `
  CREATE TABLE queue_samples (
    queue          TEXT NOT NULL,   -- by name, so a sample outlives nothing but stays readable after a delete
    at             INTEGER NOT NULL,
    period_ms      INTEGER NOT NULL,
    visible        INTEGER NOT NULL,
    not_visible    INTEGER NOT NULL,
    delayed        INTEGER NOT NULL,
    oldest_age_s   INTEGER NOT NULL,
    sent           INTEGER NOT NULL,
    received       INTEGER NOT NULL,
    deleted        INTEGER NOT NULL,
    empty_receives INTEGER NOT NULL,
    sent_bytes     INTEGER NOT NULL,
    PRIMARY KEY (queue, at)
  ) WITHOUT ROWID;
  CREATE INDEX queue_samples_by_time ON queue_samples (at);
  `,
  /* 5: documents the cluster jobs keep across restarts (DLQ alarm states) */ `
  CREATE TABLE cluster_state (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  /* 6: a FIFO group is available once its oldest message is visible (the first message in flight holds back
        the ones after it, not the ones before), so nothing reads the received messages by group any more */ `
  DROP INDEX messages_received_by_group;
  DELETE FROM fifo_groups;
  INSERT INTO fifo_groups (queue_id, group_id, available_at)
    SELECT m.queue_id, m.group_id, m.visible_at FROM messages m JOIN queues q ON q.id = m.queue_id
    WHERE q.fifo = 1 AND m.group_id IS NOT NULL
      AND m.seq = (SELECT min(seq) FROM messages h WHERE h.queue_id = m.queue_id AND h.group_id = m.group_id);
  `,
  /* 7: the audit trail of operators' replays, deletes, purges and move tasks (DLQ triage) */ `
  CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          INTEGER NOT NULL,
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
  /* 8: a standard queue's receives, counts and wakes come from its delivery state in memory
        (store/sqlite/delivery-state.ts), so a claim there need rewrite no index entry: the visibility index
        keeps only the rows of FIFO and fair queues, all of which have a group once a fair queue's rows without
        one are its tenant '' (as a send makes them); look-ups over a whole queue go by seq */ `
  UPDATE messages SET group_id = '' WHERE group_id IS NULL AND queue_id IN (SELECT queue_id FROM fair_tenants);
  DROP INDEX messages_by_visibility;
  CREATE INDEX messages_by_queue ON messages (queue_id, seq);
  CREATE INDEX messages_in_groups_by_visibility ON messages (queue_id, visible_at, seq) WHERE group_id IS NOT NULL;
  `,
  /* 9: a fair queue's tenant in a column of its own (its group id; NULL in a FIFO queue), so that FIFO rows
        stay out of the tenant index: each FIFO send wrote an entry there, at its group's place in the index,
        that nothing reads */ `
  ALTER TABLE messages ADD COLUMN tenant TEXT;
  UPDATE messages SET tenant = group_id
    WHERE group_id IS NOT NULL AND queue_id IN (SELECT id FROM queues WHERE fifo = 0);
  DROP INDEX messages_by_tenant;
  CREATE INDEX messages_by_tenant ON messages (queue_id, tenant, visible_at, seq) WHERE tenant IS NOT NULL;
  `,
  /* 10: a FIFO queue deduplicates in the scope it was created with, which a later SetQueueAttributes of
         DeduplicationScope does not change (SQS); queues made before take the scope they show */ `
  ALTER TABLE queues ADD COLUMN deduplicates_per_group INTEGER NOT NULL DEFAULT 0;
  UPDATE queues SET deduplicates_per_group = 1
    WHERE fifo = 1 AND json_extract(attributes, '$.DeduplicationScope') = 'messageGroup';
  `,
  /* 11: audit entries of bounded size, kept for a retention period: what a replay changed (digests and
         sizes of a new body or attributes, as JSON) and the first messages acted on with their new ids (JSON);
         the time index the retention removes old entries by; and the selections copied whole before, cut */ `
  ALTER TABLE audit_log ADD COLUMN edit TEXT;
  ALTER TABLE audit_log ADD COLUMN messages TEXT;
  CREATE INDEX audit_log_by_time ON audit_log (at);
  UPDATE audit_log SET detail = substr(detail, 1, 500) || '…' WHERE length(detail) > 500;
  UPDATE audit_log SET actor = substr(actor, 1, 200) || '…' WHERE length(actor) > 200;
  `,
  /* 12: SNS topics, their subscriptions, and a FIFO topic's deduplication ids (docs/decisions/sns-topics.md);
         a FIFO topic's sequence numbers count up in its row */ `
  CREATE TABLE topics (
    name          TEXT PRIMARY KEY,
    fifo          INTEGER NOT NULL,
    attributes    TEXT NOT NULL,
    tags          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    last_sequence INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE subscriptions (
    arn        TEXT PRIMARY KEY,
    topic_name TEXT NOT NULL,
    protocol   TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    owner      TEXT NOT NULL,
    attributes TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX subscriptions_by_endpoint ON subscriptions (topic_name, protocol, endpoint);
  CREATE INDEX subscriptions_by_topic ON subscriptions (topic_name, arn);
  CREATE TABLE topic_deduplication (
    topic_name       TEXT NOT NULL,
    deduplication_id TEXT NOT NULL,
    message_id       TEXT NOT NULL,
    sequence_number  INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL,
    PRIMARY KEY (topic_name, deduplication_id)
  );
  `,
  /* 13: Lambda event source mappings, each the core's JSON document under its UUID, in creation order */ `
  CREATE TABLE event_source_mappings (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid      TEXT NOT NULL UNIQUE,
    document  TEXT NOT NULL
  );
  `,
  /* 14: SNS deliveries to HTTP/HTTPS endpoints not yet answered 2xx, stored with the publication's queue
         deliveries; a worker claims each by moving due_at past its attempt (docs/decisions/sns-http-deliveries.md) */ `
  CREATE TABLE endpoint_deliveries (
    id               TEXT PRIMARY KEY,
    subscription_arn TEXT NOT NULL,
    topic_name       TEXT NOT NULL,
    endpoint         TEXT NOT NULL,
    message_id       TEXT NOT NULL,
    message_type     TEXT NOT NULL,
    body             TEXT NOT NULL,
    raw              INTEGER NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    due_at           INTEGER NOT NULL,
    created_at       INTEGER NOT NULL
  );
  CREATE INDEX endpoint_deliveries_by_due ON endpoint_deliveries (due_at);
  `,
  /* 15: an HTTP/HTTPS delivery's last failure (the status or the error's class, never the answer's body), and
         its deliveries listed per subscription for the operators (docs/guide/sns.md) */ `
  ALTER TABLE endpoint_deliveries ADD COLUMN last_error TEXT;
  CREATE INDEX endpoint_deliveries_by_subscription ON endpoint_deliveries (subscription_arn, due_at);
  `,
];
