import { sqliteFactory, sqliteInMemoryFactory } from '../helpers/store-factories.ts';
import { storeContractSuite } from './store-contract.ts';

storeContractSuite('SQLite', () => sqliteFactory());
storeContractSuite('SQLite in memory', sqliteInMemoryFactory);
