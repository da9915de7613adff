import type { Fields } from "./record-fields.js";

/**
 * Messages typed while Claude Code works. They are queued (`queue-operation` `enqueue`) and then
 * either sent as the next prompt (`dequeue`: a `user` record with the text follows), handed to the
 * model mid-turn (`remove`: no `user` record follows; newer versions add a `queued_command`
 * attachment), or taken back into the input box (`popAll`). Some are delivered as a plain `user`
 * record with no `dequeue` line at all (2.1.38, a subagent's notification among them): each `user`
 * record takes the queued text it carries out of the queue, matched by content, so that a later
 * removal that names nothing takes the text still waiting, not one delivered already. This follows
 * the queue and says which texts were consumed without a `user` record of their own, so that they
 * can be posted.
 */
export class QueuedPrompts {
  readonly #waiting: string[] = [];
  // Texts posted on `remove`, whose `queued_command` attachment may still follow.
  readonly #posted: string[] = [];

  /** Follows a `queue-operation` record; returns the text consumed mid-turn, if any. */
  operation(record: Fields): string | undefined {
    const content = typeof record.content === "string" ? record.content : undefined;
    switch (record.operation) {
      case "enqueue":
        if (content !== undefined) this.#waiting.push(content);
        return undefined;
      case "dequeue":
        this.#take(content);
        return undefined;
      case "remove": {
        const text = this.#take(content);
        if (text !== undefined) this.#posted.push(text);
        return text;
      }
      case "popAll":
        this.#waiting.length = 0;
        return undefined;
      default:
        return undefined;
    }
  }

  /** A `user` record delivered these texts: a queued one among them is no longer waiting. */
  delivered(texts: readonly string[]): void {
    if (this.#waiting.length === 0) return;
    const carried = new Set([texts.join("\n"), ...texts].map((text) => text.trim()));
    for (let index = this.#waiting.length - 1; index >= 0; index -= 1) {
      if (carried.has(this.#waiting[index]!.trim())) this.#waiting.splice(index, 1);
    }
  }

  /** Follows a `queued_command` attachment; returns its text unless `remove` already gave it. */
  attachment(prompt: string): string | undefined {
    const index = this.#posted.indexOf(prompt);
    if (index === -1) return prompt;
    this.#posted.splice(index, 1);
    return undefined;
  }

  /** A new prompt was sent: attachments of earlier removals will not come any more. */
  settle(): void {
    this.#posted.length = 0;
  }

  // The named text when it is queued, else the oldest (older versions name nothing on removal).
  #take(content: string | undefined): string | undefined {
    const index = content === undefined ? 0 : this.#waiting.indexOf(content);
    if (index === -1) return content;
    return this.#waiting.splice(index, 1)[0];
  }
}
