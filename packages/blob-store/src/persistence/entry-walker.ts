/** An image payload found in a session entry. */
export interface ImagePayload {
  /** `base64`: the field holds base64 (or a ref). `data-url`: it holds `data:<mime>;base64,<payload>`. */
  form: "base64" | "data-url";
  /** The base64 text, or a blob ref where one was stored before. */
  payload: string;
  mimeType: string | undefined;
}

/** Where an object sits in an entry: the entry itself, its `message`, a content block, or deeper. */
export type ObjectPlace = "entry" | "message" | "block" | "nested";

export interface EntryVisitor {
  /** A replacement for an image payload, or undefined to treat it as an ordinary string. */
  image?(image: ImagePayload): string | undefined;
  /** A replacement for a string value; `field` is its key (undefined in arrays), `owner` its object. */
  string?(value: string, field: string | undefined, owner: Record<string, unknown> | undefined): string;
  /** True to leave `field` out of an object at `place`. */
  dropField?(field: string, place: ObjectPlace): boolean;
  /** Called when an object was rewritten, to fix fields derived from others. */
  rewrittenObject?(original: Record<string, unknown>, rewritten: Record<string, unknown>): void;
}

type JsonObject = Record<string, unknown>;
// Which fields of an image block hold the payload, and in which form.
type ImageRule = { [field: string]: "base64" | "data-url" | ImageRule };

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+);base64,/;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function mimeTypeOf(owner: JsonObject): string | undefined {
  const mime = owner.mimeType ?? owner.media_type ?? owner.mime_type;
  return typeof mime === "string" ? mime : undefined;
}

/** Image block shapes: pi (`data`), Anthropic (`source.data`), OpenAI chat and responses (data URLs). */
function imageRuleFor(block: JsonObject): ImageRule | undefined {
  switch (block.type) {
    case "image":
      if (typeof block.data === "string") return { data: "base64" };
      if (isObject(block.source) && block.source.type === "base64") return { source: { data: "base64" } };
      if (typeof block.image_url === "string") return { image_url: "data-url" };
      return undefined;
    case "image_url":
      return typeof block.image_url === "string"
        ? { image_url: "data-url" }
        : { image_url: { url: "data-url" } };
    case "input_image":
      return { image_url: "data-url" };
    default:
      return undefined;
  }
}

/**
 * Rewrites a JSON entry through `visitor`, copying only the objects and arrays on the path to a
 * change; untouched subtrees are shared with the input, which is never mutated.
 */
export function rewriteEntry<T>(entry: T, visitor: EntryVisitor): T {
  const visitString = (value: string, field: string | undefined, owner: JsonObject | undefined) =>
    visitor.string ? visitor.string(value, field, owner) : value;

  function visitImageField(
    value: unknown,
    form: "base64" | "data-url",
    field: string,
    owner: JsonObject,
  ): unknown {
    if (typeof value !== "string") return visit(value, field, owner, "nested");
    if (form === "base64") {
      const replaced = visitor.image?.({ form, payload: value, mimeType: mimeTypeOf(owner) });
      return replaced ?? visitString(value, field, owner);
    }
    const match = DATA_URL.exec(value);
    if (!match) return visitString(value, field, owner);
    const header = match[0];
    const replaced = visitor.image?.({ form, payload: value.slice(header.length), mimeType: match[1] });
    return replaced === undefined ? visitString(value, field, owner) : header + replaced;
  }

  function visitObject(object: JsonObject, place: ObjectPlace, rule: ImageRule | undefined): JsonObject {
    let copy: JsonObject | undefined;
    for (const field of Object.keys(object)) {
      if (visitor.dropField?.(field, place)) {
        copy ??= { ...object };
        delete copy[field];
        continue;
      }
      const child = object[field];
      const fieldRule = rule?.[field];
      let next: unknown;
      if (fieldRule === "base64" || fieldRule === "data-url")
        next = visitImageField(child, fieldRule, field, object);
      else if (fieldRule !== undefined && isObject(child)) next = visitObject(child, "nested", fieldRule);
      else
        next = visit(child, field, object, place === "entry" && field === "message" ? "message" : "nested");
      if (next !== child) {
        copy ??= { ...object };
        copy[field] = next;
      }
    }
    if (copy) visitor.rewrittenObject?.(object, copy);
    return copy ?? object;
  }

  function visit(
    value: unknown,
    field: string | undefined,
    owner: JsonObject | undefined,
    place: ObjectPlace,
  ): unknown {
    if (typeof value === "string") return visitString(value, field, owner);
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      const holdsBlocks = field === "content";
      for (let i = 0; i < value.length; i++) {
        const child = value[i];
        const next =
          holdsBlocks && isObject(child)
            ? visitObject(child, "block", imageRuleFor(child))
            : visit(child, undefined, undefined, "nested");
        if (next !== child) {
          copy ??= value.slice();
          copy[i] = next;
        }
      }
      return copy ?? value;
    }
    if (isObject(value)) return visitObject(value, place, undefined);
    return value;
  }

  return visit(entry, undefined, undefined, "entry") as T;
}
