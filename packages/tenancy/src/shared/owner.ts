import { isSafeId, type Principal } from "@stowage/core";

/** `user:alice`, `org:acme`: how a principal is named as the owner of what it stores. */
export const ownerOf = (principal: Principal): string => `${principal.kind}:${principal.id}`;

/** `user/alice`, `org/acme`: the key segments of a principal's own namespace inside a store. */
export const namespaceOf = (principal: Principal): string => `${principal.kind}/${principal.id}`;

/**
 * The principal an owner string names (`user:alice` → `{ kind: "user", id: "alice" }`), or null
 * for one that names none: what a sweep that meets owners in a database or in marks goes by.
 */
export function principalOfOwner(owner: string): Principal | null {
  const colon = owner.indexOf(":");
  const kind = owner.slice(0, colon);
  const id = owner.slice(colon + 1);
  if (colon < 0 || (kind !== "user" && kind !== "org") || !isSafeId(id)) return null;
  return { kind, id };
}
