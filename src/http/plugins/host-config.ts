import { z } from "zod";
import { blank } from "../../util/env-values.js";

/** A host name, `*.` and a name (every name under it), or an IPv6 address in brackets. */
const ENTRY = /^(?:(?:\*\.)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])$/;

/** The variables of the names loopd answers to (composed into config.ts's). */
export const hostVariables = {
  /**
   * `loopd.example.com,*.internal.example`: the names (the request's `Host`)
   * loopd answers to besides the loopback ones. A port is not written: any
   * port is accepted, as a proxy in front may listen on another.
   */
  ALLOWED_HOSTS: z.preprocess(
    (v) => (blank(v) ? "" : v),
    z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean),
      )
      .superRefine((hosts, ctx) => {
        const bad = hosts.find((h) => !ENTRY.test(h));
        if (bad !== undefined) {
          ctx.addIssue({
            code: "custom",
            message: `${JSON.stringify(bad)} is not a host name: names go without a port (any port is accepted), separated by commas: loopd.example.com, *.example.com for every name under example.com, [fd00::1] for an IPv6 address`,
          });
        }
      }),
  ),
};
