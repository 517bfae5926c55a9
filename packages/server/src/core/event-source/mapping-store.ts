/** Where the mappings are kept: the store's documents, read and written as the core's mappings. */
import type { EventSourceMappingStore } from '../../store/contract.ts';
import type { EventSourceMapping } from './mapping-config.ts';

export interface MappingStore {
  /** Every mapping, oldest first. */
  loadMappings(): Promise<EventSourceMapping[]>;
  /** Adds the mapping, or replaces the one of its UUID. */
  saveMapping(mapping: EventSourceMapping): Promise<void>;
  /**
   * Replaces the mapping of `uuid` with what `change` makes of the kept one, read and written as one step;
   * `change` answering undefined leaves it. Answers the mapping written, or undefined (none, or left).
   */
  changeMapping(
    uuid: string,
    change: (mapping: EventSourceMapping) => EventSourceMapping | undefined,
  ): Promise<EventSourceMapping | undefined>;
  /**
   * Adds a new mapping unless one of the same queue and function is kept (checked and added as one step on
   * every store); answers that one's UUID, else undefined.
   */
  addMapping(mapping: EventSourceMapping): Promise<string | undefined>;
  deleteMapping(uuid: string): Promise<void>;
}

/** The mappings in the store, one JSON document each (written only by saveMapping, so read back as is). */
export function storedMappings(store: EventSourceMappingStore): MappingStore {
  return {
    async loadMappings() {
      return (await store.eventSourceMappings()).map(
        ({ document }) => JSON.parse(document) as EventSourceMapping,
      );
    },
    saveMapping: (mapping) => store.saveEventSourceMapping(mapping.uuid, JSON.stringify(mapping)),
    async changeMapping(uuid, change) {
      const written = await store.changeEventSourceMapping(uuid, (document) => {
        const next = change(JSON.parse(document) as EventSourceMapping);
        return next && JSON.stringify(next);
      });
      return written === undefined ? undefined : (JSON.parse(written) as EventSourceMapping);
    },
    addMapping: (mapping) =>
      store.addEventSourceMapping(mapping.uuid, JSON.stringify(mapping), (document) => {
        const kept = JSON.parse(document) as EventSourceMapping;
        return kept.eventSourceArn === mapping.eventSourceArn && kept.functionName === mapping.functionName;
      }),
    deleteMapping: (uuid) => store.deleteEventSourceMapping(uuid),
  };
}
