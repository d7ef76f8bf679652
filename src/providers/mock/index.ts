export { createMockProvider, type MockProviderOptions } from "./mock-provider.js";
