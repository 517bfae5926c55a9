/**
 * IP addresses and CIDR blocks as event-ruler reads them: a string is an address only if it looks like one
 * (four dotted decimal parts, or hex digits with a colon) and Java's InetAddress accepts it; an IPv4-mapped
 * IPv6 address is its IPv4 address. The errors are event-ruler's, which AWS returns without a location.
 */
import { PatternError } from './json-reader.ts';

export interface AddressRange {
  readonly bottom: Uint8Array;
  readonly top: Uint8Array;
}

const LOOKS_LIKE_IPV4 = /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/;
const LOOKS_LIKE_IPV6 = /^[0-9a-fA-F:]*:[0-9a-fA-F:]*$/;

/** The address's bytes (4 or 16), or undefined when the text is not an IP address. */
export function parseIpAddress(text: string): Uint8Array | undefined {
  if (LOOKS_LIKE_IPV4.test(text)) return parseIpv4(text);
  if (LOOKS_LIKE_IPV6.test(text)) return parseIpv6(text);
  return undefined;
}

/** A CIDR block, or event-ruler's error for it. */
export function parseCidr(text: string): AddressRange {
  const parts = javaSplit(text, '/');
  if (parts.length !== 2) throw new PatternError("Malformed CIDR, one '/' required");
  const maskBits = javaParseInt(parts[1] ?? '');
  if (maskBits === undefined) throw new PatternError('Malformed CIDR, mask bits must be an integer');
  if (maskBits < 0) throw new PatternError('Malformed CIDR, mask bits must not be negative');
  const address = addressBytes(parts[0] ?? '');
  if (address.length === 4 && maskBits > 31) throw new PatternError('IPv4 mask bits must be < 32');
  if (address.length === 16 && maskBits > 127) throw new PatternError('IPv6 mask bits must be < 128');
  return blockOf(address, maskBits);
}

/** The one-address range event-ruler makes of a plain string value that is an IP address. */
export function singleAddress(text: string): AddressRange | undefined {
  const address = parseIpAddress(text);
  return address ? { bottom: address, top: address } : undefined;
}

export function inRange(range: AddressRange, address: Uint8Array): boolean {
  return (
    address.length === range.bottom.length &&
    compareBytes(address, range.bottom) >= 0 &&
    compareBytes(address, range.top) <= 0
  );
}

function addressBytes(text: string): Uint8Array {
  const looksLikeAddress = LOOKS_LIKE_IPV4.test(text) || LOOKS_LIKE_IPV6.test(text);
  if (!looksLikeAddress) throw new PatternError(`Nonstandard IP address: ${text}`);
  const address = parseIpAddress(text);
  if (!address) throw new PatternError(`Invalid IP address: ${text}`);
  return address;
}

function blockOf(address: Uint8Array, maskBits: number): AddressRange {
  const bottom = new Uint8Array(address.length);
  const top = new Uint8Array(address.length);
  for (let index = 0; index < address.length; index++) {
    const fixedBits = Math.max(0, Math.min(8, maskBits - index * 8));
    const mask = (0xff << (8 - fixedBits)) & 0xff;
    bottom[index] = (address[index] ?? 0) & mask;
    top[index] = (address[index] ?? 0) | (~mask & 0xff);
  }
  return { bottom, top };
}

function parseIpv4(text: string): Uint8Array | undefined {
  const bytes = new Uint8Array(4);
  const parts = text.split('.');
  for (let index = 0; index < 4; index++) {
    const part = parts[index] ?? '';
    // Java refuses leading zeros as ambiguous (octal or decimal).
    if (part.length > 3 || (part.length > 1 && part.startsWith('0'))) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes[index] = value;
  }
  return bytes;
}

function parseIpv6(text: string): Uint8Array | undefined {
  const gap = text.indexOf('::');
  if (gap !== text.lastIndexOf('::') || text.includes(':::')) return undefined;
  const head = gap < 0 ? text : text.slice(0, gap);
  const tail = gap < 0 ? '' : text.slice(gap + 2);
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groupCount = headGroups.length + tailGroups.length;
  if (gap < 0 ? groupCount !== 8 : groupCount > 7) return undefined;
  const groups = [...headGroups, ...new Array<string>(8 - groupCount).fill('0'), ...tailGroups];
  const bytes = new Uint8Array(16);
  for (let index = 0; index < 8; index++) {
    const group = groups[index] ?? '';
    if (group.length < 1 || group.length > 4) return undefined;
    const value = Number.parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  }
  const mapped =
    bytes.subarray(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

function compareBytes(left: Uint8Array, right: Uint8Array): number {
  for (let index = 0; index < left.length; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** Java's String.split with a literal separator: trailing empty parts are dropped. */
function javaSplit(text: string, separator: string): string[] {
  const parts = text.split(separator);
  while (parts.length > 0 && parts.at(-1) === '') parts.pop();
  return parts;
}

/** Java's Integer.parseInt: an optional sign and decimal digits that fit in 32 bits. */
function javaParseInt(text: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= -2147483648 && value <= 2147483647 ? value : undefined;
}
