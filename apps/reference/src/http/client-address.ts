import ipaddr from "ipaddr.js";

/** IPv6 bits that name one network: a host gets a whole /64, so each of its addresses counts as one caller. */
const IPV6_NETWORK_BITS = 64;

/**
 * The address a request without a valid key is counted against. With `trustedProxies` = 0 (the
 * default) it is the socket's peer. Behind reverse proxies it is the address the outermost of them
 * saw: each proxy appends the address it received from to `X-Forwarded-For`, so the entry
 * `trustedProxies` places from the right (the peer counting as the first proxy) is the client's,
 * and entries further left are whatever the client wrote. Only count proxies the app cannot be
 * reached around: a client that connects directly chooses its own `X-Forwarded-For`.
 *
 * IPv4-mapped IPv6 addresses count as their IPv4 address, and IPv6 addresses by their /64
 * network (`2001:db8:1:2::/64`): one host can use any address of its /64. A forwarded entry that
 * is not an address falls back to the peer's.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trustedProxies: number,
): string {
  const forwarded = (forwardedFor ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  // Nearest first: the peer, then what each proxy saw, right to left.
  const chain = [peer ?? "", ...forwarded.reverse()];
  const chosen = chain[Math.min(trustedProxies, chain.length - 1)] ?? "";
  return rateLimitKey(chosen) ?? rateLimitKey(peer ?? "") ?? "unknown";
}

/** `chosen` as a bucket key: IPv4 as it is, IPv6 by its /64; undefined when it is not an address. */
function rateLimitKey(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, IPV6_NETWORK_BITS / 16);
  return `${parts.map((part) => part.toString(16)).join(":")}::/${IPV6_NETWORK_BITS}`;
}
