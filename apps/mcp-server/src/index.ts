export { buildMcpApp, LOOPBACK_HOSTS, MAX_BODY_BYTES, type McpAppDeps } from "./app.ts";
export { bearerToken, principalForToken } from "./auth.ts";
export {
  type ActivationOptions,
  type Authorization,
  type AuthorizeMethod,
  activeCapabilities,
  authorize,
  CAPABILITIES,
  type CapabilityActivation,
  type CapabilityDeps,
  capabilityActivations,
  composeInstructions,
  createCapabilities,
  DEFAULT_RECALL_TOKEN_BUDGET,
  foreignToolsInGuidance,
  INSTRUCTIONS_MAX_CHARS,
  type InactiveReason,
  SEMANTIC_RECALL,
} from "./capabilities/index.ts";
export {
  createEmbeddingsProvider,
  EmbedderUnavailableError,
  type EmbeddingsProvider,
  type EmbeddingsProviderOptions,
  type EmbedFailure,
  type EmbedResult,
  startEmbeddingBackfill,
  unitVector,
} from "./embeddings/index.ts";
export {
  BUN_IDLE_TIMEOUT_S,
  type HttpServerHandle,
  type HttpServerOptions,
  startHttpServer,
} from "./http-server.ts";
export {
  createRateLimiter,
  DEFAULT_PROTOCOL_REQUESTS_PER_MINUTE,
  type LimitDecision,
  type LimiterStatus,
  type RateLimiter,
  type RateLimiterOptions,
} from "./limiter.ts";
export { createLogger, describeError, type Logger, type LoggerOptions } from "./logger.ts";
export { isLoopbackAddress, isLoopbackHost } from "./loopback.ts";
export {
  composeManifest,
  describePrompt,
  describeTool,
  type PublishedPrompt,
  type PublishedTool,
} from "./manifest.ts";
export { type MetricsAccess, metricsAccessFor, type ToolCallOutcome } from "./metrics.ts";
export {
  createAuthResolver,
  type OAuthOptions,
  protectedResourceMetadata,
} from "./oauth.ts";
export { type AuthResolver, hasScopes, type Principal, SCOPES, type Scope } from "./principal.ts";
export { meterMessage } from "./protocol-meter.ts";
export { createMcpServer, SERVER_INFO } from "./server.ts";
export { serveMcpStdio } from "./server-transports.ts";
export { revokeAndAudit } from "./sign-in/grants.ts";
export { createSecretBox, createSignIn, type SignIn, type SignInOptions } from "./sign-in/index.ts";
export { createMetadataFetch } from "./sign-in/metadata-fetch.ts";
export type { RegistrationLimitsOptions } from "./sign-in/registration-limits.ts";
export type {
  Capability,
  Embedder,
  EmbedderFailureClass,
  EmbedderStatus,
  PromptDefinition,
  ToolAnnotations,
  ToolContext,
  ToolDefinition,
  ToolOutcome,
} from "./tool-definition.ts";
