import { postgresFactory } from '../helpers/postgres.ts';
import { storeContractSuite } from './store-contract.ts';

// A real PostgreSQL (127.0.0.1:5432), on a fresh database dropped afterwards.
storeContractSuite('PostgreSQL', postgresFactory);
