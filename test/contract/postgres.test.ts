import { postgresFactory } from '../helpers/postgres.ts';
import { dlqSemanticsSuite } from './dlq-semantics.ts';
import { fifoSemanticsSuite } from './fifo-semantics.ts';
import { historySemanticsSuite } from './history-semantics.ts';
import { limitsSuite } from './limits-semantics.ts';
import { sqsSemanticsSuite } from './sqs-semantics.ts';
import { strictReceiptSuite } from './strict-receipt-semantics.ts';
import { triageSemanticsSuite } from './triage-semantics.ts';

// A real PostgreSQL (127.0.0.1:5432): each suite on its own fresh database, dropped afterwards.
sqsSemanticsSuite('PostgreSQL', postgresFactory);
fifoSemanticsSuite('PostgreSQL', postgresFactory);
dlqSemanticsSuite('PostgreSQL', postgresFactory);
historySemanticsSuite('PostgreSQL', postgresFactory);
limitsSuite('PostgreSQL', postgresFactory);
strictReceiptSuite('PostgreSQL', postgresFactory);
triageSemanticsSuite('PostgreSQL', postgresFactory);
