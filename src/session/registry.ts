// The registry is part of the protocol-neutral connection layer now; kept here for existing imports.
export { SessionRegistry, type SessionHandle } from '../connection/registry.js';
