import { Webhook } from "standardwebhooks";
import { z } from "zod";

/** A Standard Webhooks signing secret (`whsec_` and base64), as the `standardwebhooks` package takes it. */
export const webhookSecret = z.string().refine((s) => {
  try {
    new Webhook(s);
    return true;
  } catch {
    return false;
  }
}, "must be a Standard Webhooks secret: whsec_ and base64");
