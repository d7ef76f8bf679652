import type { ContextSettings } from "../core/context-settings.js";
import type { Services } from "../services.js";
import type { RunBudget } from "../core/run-settings.js";
import type { BudgetInput } from "../store/schema.js";
import { checkModel } from "./check-model.js";
import { settleBudget, type BudgetFields } from "./settle-budget.js";

/** The model that writes a conversation's summaries, when it is not the run's own; null when none is written or the run's model writes them. */
export const summaryModelOf = (context: ContextSettings | null | undefined): string | null =>
  context?.strategy === "summarize" ? (context.summary_model ?? null) : null;

/**
 * A conversation's models as they will stand, checked before it is saved:
 * each one allowed (`MODELS_ALLOWED`, the mock where it is offered), and
 * priced when a cost limit applies to its runs (its own budget, the
 * server's, a ceiling, the tenant's daily one). 400s name the field.
 * Returns the budget its runs would get (when the request sets none).
 */
export function checkConversationModels(
  { config, prices }: Pick<Services, "config" | "prices">,
  {
    provider,
    model,
    context,
    budget,
    fields,
  }: {
    provider: string;
    model: string;
    context: ContextSettings | null | undefined;
    budget: BudgetInput | null | undefined;
    fields: BudgetFields & { provider: string };
  },
): RunBudget {
  checkModel(config, { provider, model, field: fields });
  if (context?.summary_model)
    checkModel(config, {
      provider,
      model: context.summary_model,
      field: { provider: fields.provider, model: fields.summaryModel },
    });
  return settleBudget({
    request: undefined,
    maxSteps: undefined,
    conversation: budget ?? null,
    config,
    model,
    summaryModel: summaryModelOf(context),
    priced: (m) => prices.priceOf(m) !== null,
    fields,
  });
}
