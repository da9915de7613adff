import type { ExpiringThing } from "@stowage/tenancy";
import { Command } from "commander";
import { parseSpanMs } from "../time-input.js";
import type { CommandContext } from "./context.js";
import { withServices } from "./open.js";
import { jsonOption, printResult } from "./output.js";
import { addPrincipalOptions, type PrincipalOptions, requiredPrincipal } from "./principal-option.js";
import { usageError } from "./usage-error.js";

interface ExpiringOptions extends PrincipalOptions {
  within: number;
  json?: boolean;
}

const line = (thing: ExpiringThing) =>
  `${thing.expiresAt}  ${thing.kind}  ${thing.id}  ${thing.bytes} bytes${thing.requestId ? `  request ${thing.requestId}` : ""}`;

/** `stowage expiring --within 3d`: what a principal holds that expires within the window, soonest first. */
export function expiringCommand(context: CommandContext): Command {
  return addPrincipalOptions(
    new Command("expiring").description(
      "List what a principal holds that expires soon (stored sessions; uploads under a retention), soonest first",
    ),
  )
    .option(
      "--within <span>",
      "how far ahead to look: 3d, 12h, 90m",
      (value) => {
        const ms = parseSpanMs(value);
        if (ms === undefined)
          throw usageError(`--within must be a span such as 3d, 12h or 90m, got ${JSON.stringify(value)}`);
        return ms;
      },
      7 * 86_400_000,
    )
    .addOption(jsonOption())
    .action(async (options: ExpiringOptions) => {
      const principal = requiredPrincipal(options);
      await withServices(context, async (services) => {
        const expiring = await services.stowage.expiring(principal, options.within);
        printResult(context, options.json, { expiring }, () => [
          ...expiring.map(line),
          `${expiring.length} expiring within ${options.within / 3_600_000} hours`,
        ]);
      });
    });
}
