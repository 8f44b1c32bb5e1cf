/**
 * Rookery: an IMAP server made for test suites.
 *
 * ```ts
 * import { createServer } from 'rookery';
 * const server = createServer({ plugins: 'all' });
 * const { imap } = await server.start();
 * // ... run an IMAP client against imap.host:imap.port, drive server.control ...
 * await server.stop();
 * ```
 */
// Every built-in imported with the package: a program that imports the
// package never needs the synchronous load of a built-in, which under a test
// runner's own module loader (vitest inlining a linked package) or a bundler
// would load another copy of the core (src/testing/index.ts does the same).
import './extensions/index.js';
export { createServer, Server } from './server.js';
export type { ListenAddress, ServerAddresses } from './server.js';
export { ServiceError } from './errors.js';
export { RestServer, isLoopbackHost } from './rest/rest.js';
export type { RestConfig } from './rest/rest.js';
export type { Route, RouteContext, Param, QueryParam, Method } from './rest/route.js';
export type { Schema } from './rest/schema.js';
export type { ErrorCode } from './errors.js';
export { storageSchema, userStorageSchema } from './options/schema.js';
export { presets, PRESET_NAMES } from './presets/index.js';
export type { PresetName, PresetOptions } from './presets/index.js';
export { TEST_CERTIFICATE } from './tls/test-certificate.js';
export { TEST_CA } from './tls/test-ca.js';
export { PROFILES, PROFILE_FLAWS, WRONG_HOST } from './tls/profile-names.js';
export type { ProfileName } from './tls/profile-names.js';
export { STARTTLS_ATTACKS, ATTACKS } from './tls/attacks/catalog.js';
export type { AttackName, AttackInfo } from './tls/attacks/catalog.js';
export { VERDICTS } from './tls/verdicts.js';
export type { TlsVerdict, Verdict } from './tls/verdicts.js';
export type { ListenerTlsOptions, TlsListener, TlsVersion, AlpnMode } from './tls/settings.js';
export type { ListenerTls } from './tls/listener-tls.js';
export type { ServerTls } from './tls/server-tls.js';
export type {
  ServerOptions,
  TlsOptions,
  Storage,
  StorageMailbox,
  StorageMessage,
  StorageNamespace,
  UserOptions,
  RestOptions,
  SmtpOptions,
  Pop3Options,
  Pop3Behaviour,
  ClockOption,
  UserStorage,
  TranscriptOptions,
  ScriptReplay,
} from './options/types.js';
export { Transcript } from './transcript/transcript.js';
export type { TranscriptChunk, TranscriptChunkJson, TranscriptJson, TranscriptSide } from './transcript/transcript.js';
export { parseTranscripts, TranscriptSyntaxError } from './transcript/text.js';
export type { Transcripts, TranscriptSummary } from './transcript/transcripts.js';
export { startRecorder } from './transcript/record.js';
export type { RecorderOptions, Recorder } from './transcript/record.js';
export { ControlApi } from './control/control.js';
export type {
  AddMessageInput,
  AddUserInput,
  CreateMailboxInput,
  CreateMailboxOptions,
  UpdateUserInput,
  ResetUidValidityInput,
  UidMapping,
  XOAuth2Input,
  AppendCheck,
  MailboxScope,
} from './control/control.js';
export type { MailboxView } from './store/view.js';
export type { MailboxInfo, MessageInfo, UserInfo } from './control/resources.js';
export type { SnapshotMessage } from './store/snapshot.js';
export { importMessages } from './fixtures/import.js';
export type { ImportedMessage } from './fixtures/import.js';
export { exportStorage, EXPORT_FORMATS } from './fixtures/export.js';
export { generateMailbox, generateMessages, MALFORMED_CASES, MALFORMED_CASE_NAMES, BODY_KINDS } from './generator/index.js';
export type { GeneratedMailbox, GeneratedMessage, GenerateOptions, MalformedCase, BodyKind, Profile, SizeRange, ThreadOptions, AddressOptions, DateOptions, FlagOptions, Script as NameScript } from './generator/index.js';
export { compareServers, formatReport, parseAllowList, NORMALIZATIONS } from './compare/index.js';
export type { CompareOptions, CompareReport, CompareSide, Difference, AllowRule, Normalization, Credentials, FillMessage } from './compare/index.js';
export type { ExportFormat, ExportRequest } from './fixtures/export.js';
export { EVENT_TYPES } from './events.js';
export type { EventRecord } from './event-log.js';
export type { OAuthOptions, OAuthClientOption, OAuthStyle, GrantType } from './oauth/options.js';
export type { OAuthService, OAuthEvent, OAuthSettings, TokenCheck, TokenRefusal, TokenResponse, Decision, PendingAuthorization } from './oauth/service.js';
export type { OAuthControl } from './oauth/control.js';
export type { StateCondition, StateReport } from './state-conditions.js';
export type {
  ServerEvents,
  ServerEventType,
  SessionInfo,
  SessionState,
  SessionEvent,
  SessionEventType,
  CommandEvent,
  MailboxEvent,
  ExpungeEvent,
  FlagsEvent,
  AclEvent,
  ScriptEvent,
  ResetEvent,
  DeliveryEvent,
  ClientEvent,
  ReplayEvent,
  AppendEvent,
} from './events.js';
export { BUILTIN_PLUGINS } from './extensions/catalog.js';
export { defineExtension } from './extensions/extension.js';
export type {
  Plugin,
  Extension,
  ExtensionApis,
  SetupContext,
  CommandWrapper,
  SelectedContext,
  FetchItem,
  FetchItemContext,
  FetchItemRequest,
  SearchKeySpec,
  SearchPoint,
  SearchResultContext,
  SearchResultItems,
  SearchMatch,
  StatusItem,
  ListEntry,
  ListContext,
  ListPoint,
  CommandParameter,
  SelectPoint,
  CreatePoint,
  Actor,
  AppendCheckInput,
  AppendDataForm,
  AppendSource,
  TransferCheckInput,
  CreateCheckInput,
  MutationChecks,
  LiteralInfo,
  AccessRequest,
  AccessVerdict,
  Right,
  StoreField,
  StoreFields,
  SaslMechanism,
  ResultCodes,
} from './extensions/extension.js';
export type { SpecialUseApi } from './extensions/special-use/index.js';
export type { AppendLimitApi } from './extensions/appendlimit/index.js';
export type { NotifyApi } from './extensions/notify/index.js';
export { getField, setField, serverFields } from './store/fields.js';
export { atom, literal } from './imap/wire/values.js';
export type { ImapValue } from './imap/wire/values.js';
export type { StoreChange } from './store/changes.js';
export type { Mailbox } from './store/mailbox.js';
export type { Message } from './store/message.js';
export type { CommandSpec, CommandContext, CommandResult, ImapState } from './imap/command.js';
export { CommandFailure } from './imap/command.js';
export type { ImapSession, SelectedUpdatePolicy } from './imap/session.js';
export { ScriptEngine } from './script/engine.js';
export type { ScriptAction, ScriptFiring } from './script/engine.js';
export type { ScriptRule, ScriptRuleJson, ScriptRuleInfo, ScriptRuleHandle, ScriptContext, ScriptOn } from './script/rule.js';
// Rule language, issue 14 part 1: structured responses for `mutate`, the defects library.
export type { MutateOp, MutateValue, MutateAt, SeedScope, ScriptResponse } from './script/rule.js';
export type { ScriptResponseCode } from './script/response.js';
export { defects, defectNames } from './script/defects.js';
export type { Defect } from './script/defects.js';
// The client checker (docs/client-check.md).
export { CLIENT_RULES, CLIENT_CHECK_MODES } from './client-check/rules.js';
export type { ClientRule, ClientCheckMode, FindingSeverity } from './client-check/rules.js';
export type { ClientFinding, ClientFindingsQuery, ClientReport } from './client-check/findings.js';
export { renderClientReport } from './client-check/report.js';
export type { ClientReportFormat } from './client-check/report.js';
export type { CapabilityOptions } from './options/types.js';
// Issue 14: transport faults, server-clock timers, throttling (docs/faults-and-timers.md).
export type { TransportRuleFields, FaultsOption } from './script/transport.js';
export type { MaxConnectionsPerUserOption, RateLimitOption, ConnectionLimitStyle } from './session/limits.js';
