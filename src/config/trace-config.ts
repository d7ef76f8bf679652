/**
 * As the OpenTelemetry SDKs read them: the traces endpoint is a whole URL;
 * the general one is a base, with the signal's path added.
 */
export function tracesUrl(traces: string | undefined, base: string | undefined): string | undefined {
  if (traces) return traces;
  return base && `${base.replace(/\/+$/, "")}/v1/traces`;
}
