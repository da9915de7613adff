import type { Principal } from "@stowage/core";

/** `user:alice`, `org:acme`: how a principal is named as the owner of what it stores. */
export const ownerOf = (principal: Principal): string => `${principal.kind}:${principal.id}`;

/** `user/alice`, `org/acme`: the key segments of a principal's own namespace inside a store. */
export const namespaceOf = (principal: Principal): string => `${principal.kind}/${principal.id}`;
