import type { IncomingMessage, Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /**
   * A new connection must have sent its first request's headers within this, including one that sends
   * nothing at all (and, over TLS, one that never finishes its handshake).
   */
  headersTimeoutMs: number;
  /** The whole request, headers and body, must arrive within this (at least the headers timeout). */
  requestTimeoutMs: number;
  /** A keep-alive connection with no request under way is closed after this. */
  keepAliveTimeoutMs: number;
  /** An answer its client takes no bytes of for this long is cut off, freeing what it holds. */
  sendTimeoutMs: number;
  /** Connections one client address may hold open at once; a connection past it is closed at once. */
  perAddress: number;
}

export const CONNECTION_LIMIT_DEFAULTS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  sendTimeoutMs: 30_000,
  perAddress: 256,
};

/**
 * Node's own request timeouts, as createServer options: assigned to the server afterwards, the headers
 * and request timeouts are not applied at all.
 */
export function nodeTimeoutOptions(limits: ConnectionLimits) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // How often Node looks for requests past those timeouts (every 30 s by default).
    connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    handshakeTimeout: limits.headersTimeoutMs,
  };
}

/**
 * Caps the connections of each client address, and closes a connection that has not sent a request
 * within the headers timeout: Node's own headers timeout misses a TLS connection that goes quiet after its
 * handshake, and each such connection holds a file descriptor until then.
 */
export function guardConnections(server: Server | HttpsServer, limits: ConnectionLimits, tls: boolean): void {
  const openPerAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const open = openPerAddress.get(address) ?? 0;
    if (open >= limits.perAddress) {
      socket.destroy();
      return;
    }
    openPerAddress.set(address, open + 1);
    socket.once('close', () => {
      const left = (openPerAddress.get(address) ?? 1) - 1;
      if (left > 0) openPerAddress.set(address, left);
      else openPerAddress.delete(address);
    });
  });
  const awaitingFirstRequest = new WeakSet<Socket>();
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    if (socket.destroyed) return;
    awaitingFirstRequest.add(socket);
    // With no 'timeout' listener of its own, Node's HTTP server destroys the socket when this fires.
    socket.setTimeout(limits.headersTimeoutMs);
  });
  server.on('request', (request: IncomingMessage) => {
    if (awaitingFirstRequest.delete(request.socket)) request.socket.setTimeout(0);
  });
}
