export * from "./openai-items.js";
export { finishText, itemsOfMessages, outputText, type ItemsOptions } from "./items-of-messages.js";
export { inputOfItems, type InputItem, type ResponseInput } from "./input-of-items.js";
