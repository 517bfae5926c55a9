/** Sluice embedded in a Node.js program: start a server in-process (tests, tools, a sidecar). */

export { type Clock, FakeClock, systemClock } from '#toolkit/clock';
export { type RunningSluice, type SluiceOptions, startSluice } from './server/sluice-server.ts';
