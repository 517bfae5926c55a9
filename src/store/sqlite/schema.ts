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
];
