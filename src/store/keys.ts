// Every Redis key and channel name is built here (docs/architecture.md §4; docs/storage.md describes
// each). Tenant-scoped keys carry the hash tag {t:<tenant>} so a tenant's keys share one cluster slot.

export interface Keys {
  readonly prefix: string;
  /** Session record: a small JSON string, sliding TTL. */
  session(tenant: string, sessionId: string): string;
  /** Upstream MCP sessions of one client session: hash provider id → upstream session. */
  upstreamSessions(tenant: string, sessionId: string): string;
  /** Held (SET NX, short TTL) by the replica opening a client session's own upstream session. */
  upstreamSessionOpening(tenant: string, sessionId: string, provider: string): string;
  /** Resource URIs a session subscribed to: set. */
  subscriptions(tenant: string, sessionId: string): string;
  /**
   * Upstream calls of a tenant still running after a second: hash `<provider> <upstream session>
   * <request id>` → when the call's hard deadline passes, so a survivor cancels a dead replica's.
   */
  upstreamCalls(tenant: string): string;
  /**
   * Upstream sessions replicas share among client sessions: hash `<provider> <upstream session>` →
   * when the owning replica's lease ends, so a survivor ends those of a dead replica.
   */
  upstreamShared(tenant: string): string;
  /**
   * The GET streams open on a session, on every replica (the per-session cap): sorted set of
   * stream ids scored by when each lease ends (renewed while the stream is open).
   */
  sessionStreams(tenant: string, sessionId: string): string;
  /** Event log of one SSE stream of one session: Redis Stream, bounded, TTL = session TTL. */
  eventLog(tenant: string, sessionId: string, streamId: string): string;
  /** Ids of a session's request streams that have an event log: set, so ending the session deletes them. */
  eventLogIds(tenant: string, sessionId: string): string;
  /** A client's answer to a server-to-client request (by its id), kept while it travels the channel. */
  clientAnswer(tenant: string, sessionId: string, requestId: string): string;
  /** A client's cancellation of a request (its id as JSON), kept while it travels the channel. */
  clientCancel(tenant: string, sessionId: string, requestId: string): string;
  /** Claimed (SET NX) by the one replica that runs a request stream's interrupted call again. */
  rerunClaim(tenant: string, sessionId: string, streamId: string): string;
  /** Pub/sub channel of one session: events, client responses, cancellations. */
  sessionChannel(tenant: string, sessionId: string): string;
  /** Pub/sub channel naming each session record updated or deleted (replicas drop their copy). */
  sessionsChannel(): string;
  /** A replica's heartbeat: "1", refreshed every 2 s with a 6 s TTL; gone once the replica is. */
  replica(id: string): string;
  /** Marks a 2026-07-28 call held for its retry (MRTR) as alive: "1", TTL = the input timeout. */
  heldCall(tenant: string, id: string): string;
  /** Pub/sub channel of a held call (retries from other replicas), or of one such retry (`<id>.<c>`). */
  heldCallChannel(tenant: string, id: string): string;
  /** A held call's last message to a retry on another replica (`id`: `<call>.<retry>`), kept while it travels. */
  heldCallEnd(tenant: string, id: string): string;
  /**
   * A URL-mode elicitation asking a user to connect an account (per-user providers):
   * `"<session id> <user>"`, so whichever replica hears it completed tells that session, once.
   */
  connectElicitation(tenant: string, id: string): string;
  /** Ids of a tenant's sessions (sorted set scored by idle expiry, pruned as sessions are created), for the admin API. */
  sessionIndex(tenant: string): string;
  /**
   * Sessions one owner holds in a tenant (the session cap): sorted set of session ids scored by
   * when each would expire if idle. `owner` is `p:<hash>` for a principal, `ip:<address>` else.
   */
  sessionOwner(tenant: string, owner: string): string;
  /**
   * A task (docs/upstream-mcp.md#tasks): JSON, its status, result and caller; TTL = the task's.
   * `owner` in the keys below is `p:<hash>` for a user, `s:<session id>` on a tenant without auth.
   */
  task(tenant: string, id: string): string;
  /**
   * A caller's tasks (tasks/list): sorted set of task ids scored by when each expires (epoch ms);
   * `owner` is `<owner>/<server>` for the tasks made at a virtual server's URL.
   */
  callerTasks(tenant: string, owner: string): string;
  /** Live tasks (not terminal) of one caller, or of the tenant when `owner` is undefined: sorted set, the caps. */
  liveTasks(tenant: string, owner: string | undefined): string;
  /** Counter of a caller's tasks/* requests in one fixed minute (`window` = epoch minutes). */
  taskPolls(tenant: string, owner: string, window: number): string;
  /** Pub/sub channel announcing task changes and cancellations to every replica. */
  tasksChannel(): string;
  /**
   * A client's own task as a session-era upstream knows it (`id` is Portico's id for it): JSON
   * `{sessionId, clientTaskId, expiresAt}`; TTL = the task's, at most an hour.
   */
  clientTask(tenant: string, provider: string, id: string): string;
  /** Counter of the tasks one client session ran for a provider's upstreams this hour (the cap). */
  clientTaskCount(tenant: string, provider: string, session: string): string;
  /** A tenant's admin audit log: Redis Stream, bounded, durable. */
  tenantAudit(tenant: string): string;
  /**
   * Marks a run-time catalog conflict as recorded in the audit log (by a digest of provider,
   * entry and profile), so that of all the replicas that see it one records it: "1", TTL a day.
   */
  conflictNoted(tenant: string, digest: string): string;
  /**
   * A pinned provider's approved tool definitions (docs/security.md "Pinned tool definitions"):
   * JSON `{approvedAt, tools: {<name>: [{digest, definition, approvedAt, approvedBy}]}}`,
   * written by compare-and-set, durable; deleted with the provider.
   */
  pins(tenant: string, provider: string): string;
  /** The copy of an `openapi` provider's document fetched from its documentUrl (openapi/document-copies.ts). */
  openapiDocument(tenant: string, provider: string): string;
  /** A pinned provider's definitions awaiting approval: hash tool name → the newest one seen. Durable. */
  pinsPending(tenant: string, provider: string): string;
  /**
   * Definitions of a pinned provider first seen this hour, counted across replicas (an upstream
   * that changes its tools on every list is recorded this many times an hour, then counted only).
   */
  pinNotices(tenant: string, provider: string, change: "new" | "changed"): string;
  /** Marks a provider's changed definition (by digest) as recorded in the audit log, by one replica: "1", TTL a day. */
  pinNoted(tenant: string, provider: string, digest: string): string;
  /** The platform audit log (tenants and platform keys): Redis Stream, bounded, durable. */
  platformAudit(): string;
  /**
   * The keys of a tenant's audit log (`null`: the platform's) as a chain: the stream, its head (the
   * newest entry's sequence number and MAC) and its anchor (the last entry trimmed off).
   */
  auditChain(tenant: string | null): {
    readonly head: string;
    readonly stream: string;
    readonly anchor: string;
  };
  /** An admin API key's record, by the SHA-256 of the key. */
  apiKey(hash: string): string;
  /** Hash of key id → key hash, per scope ("platform" or a tenant id). */
  apiKeyIndex(scope: string): string;
  /** A tenant's local user (login page): JSON with a scrypt password hash. */
  user(tenant: string, username: string): string;
  /** Set of a tenant's usernames. */
  userIndex(tenant: string): string;
  /** An OAuth grant (user × client × tenant): JSON, durable until revoked. */
  grant(tenant: string, id: string): string;
  /** Set of a tenant's grant ids. */
  grantIndex(tenant: string): string;
  /** An authorization code by the SHA-256 of the code: JSON, 60 s. */
  authCode(tenant: string, hash: string): string;
  /** A refresh token by its SHA-256: JSON, 30 days. */
  refreshToken(tenant: string, hash: string): string;
  /**
   * Scopes a user consented to for a client (by the client id's SHA-256): a hash, one field per
   * protected resource (`t`: the tenant's URL, `s:<server>`: a virtual server's).
   */
  consents(tenant: string, sub: string, clientHash: string): string;
  /** A pending authorization request (login and consent in progress): JSON, 10 minutes. */
  oauthFlow(id: string): string;
  /** Durable tenant record (JSON, providers included, header values sealed). */
  tenant(tenant: string): string;
  /** Set of all tenant ids. */
  tenantIndex(): string;
  /** Pub/sub channel announcing tenant record changes to every replica. */
  tenantsChannel(): string;
  /** Written before WAIT in Sentinel mode, so that WAIT covers every write made before it. */
  replicationProbe(): string;
  /** Pub/sub channel of a tenant's list changes and resource updates, for listen streams on every replica. */
  listenChannel(tenant: string): string;
  /** The OAuth signing keys: one durable JSON record (private keys sealed), written by compare-and-set. */
  oauthSigningKeys(): string;
  /** Marks a revoked access token by its `jti`; expires when the token would have. */
  revokedToken(jti: string): string;
  /** Index of revoked tokens: sorted set, member `<exp>:<jti>`, score = the token's expiry. */
  revokedTokens(): string;
  /** Pub/sub channel announcing each revocation (`<exp>:<jti>`) to every replica. */
  revocationsChannel(): string;
  /** An OAuth client registered by RFC 7591 or the admin API: durable JSON, secret hashed. */
  oauthClient(clientId: string): string;
  /** Set of the ids of the OAuth clients pre-registered for a tenant. */
  oauthTenantClients(tenant: string): string;
  /**
   * A rate-limit counter of one fixed minute (`window` = epoch minutes) on a tenant's /mcp:
   * `subject` is `t` for the whole tenant, `p:<hash>` for a user (the token's `sub`, whatever the client), `ip:<address>` else.
   */
  mcpRateLimit(tenant: string, subject: string, window: number): string;
  /** A rate-limit counter of one fixed minute on an OAuth endpoint (`token`, `revoke`, `register`, `authorize`, `login`, `consent`), per client IP. */
  oauthRateLimit(endpoint: string, subject: string, window: number): string;
  /** Failures in a row fetching one outbound target (an issuer's metadata; `target`: a digest of it). */
  fetchFailures(target: string): string;
  /** Until when (epoch ms) that target is not fetched again. */
  fetchBlocked(target: string): string;
  /** Clients registered through /oauth/register by one client IP in one fixed hour (`hour` = epoch hours). */
  oauthRegistrations(subject: string, hour: number): string;
  /**
   * Failed logins to one account name (`account`: a digest of the submitted username, whether or
   * not the user exists), from one client address (`subject`, ipSubject) or, without it, from all.
   */
  loginFailures(tenant: string, account: string, subject?: string): string;
  /** Marks a login back-off in force for an account name, from one address or (no subject) all. */
  loginBlock(tenant: string, account: string, subject?: string): string;
  /** Set of the address subjects with failures counted for an account name (to clear them all). */
  loginAddresses(tenant: string, account: string): string;
  /** Marks an address the account name signed in from: the account-wide back-off spares it. */
  loginKnown(tenant: string, account: string, subject: string): string;
  /** A connected account: one user's tokens at one provider's upstream, sealed JSON, durable (`user`: a digest of the sub). */
  account(tenant: string, user: string, provider: string): string;
  /** Set of the users (their `sub`) connected to a provider. */
  accountUsers(tenant: string, provider: string): string;
  /** Set of the providers a user (a digest of the sub) connected. */
  accountProviders(tenant: string, user: string): string;
  /** Portico's client registration at an upstream authorization server (RFC 7591), sealed JSON, durable. */
  accountRegistration(tenant: string, provider: string, issuer: string): string;
  /** Set of the issuers (digests, as in accountRegistration) a provider's client is registered at. */
  accountRegistrations(tenant: string, provider: string): string;
  /** A refresh in progress (single flight across replicas): the refreshing replica's token, 15 s. */
  accountRefreshLock(tenant: string, user: string, provider: string): string;
  /** A connect, or an accounts or console sign-in, in progress, by its `state`: JSON, 10 minutes, single-use. */
  accountFlow(state: string): string;
  /** A browser signed in to the accounts pages (by the SHA-256 of its cookie): JSON, 1 hour. */
  accountSession(hash: string): string;
  /** Pub/sub channel announcing connected-account changes to every replica. */
  accountsChannel(): string;
  /** A platform user (console sign-in): JSON with a scrypt password hash, durable. */
  platformUser(username: string): string;
  /** Set of the platform users' usernames. */
  platformUserIndex(): string;
  /** Set of the subjects (`sub`) named admins of a tenant (console sign-in), durable. */
  tenantAdmins(tenant: string): string;
  /** A console session (by the SHA-256 of its cookie): JSON, 30 minutes idle, 8 hours at most. */
  consoleSession(hash: string): string;
}

export function createKeys(prefix = "portico"): Keys {
  const t = (tenant: string) => `${prefix}:{t:${tenant}}`;
  return {
    prefix,
    session: (tenant, sid) => `${t(tenant)}:s:${sid}`,
    upstreamSessions: (tenant, sid) => `${t(tenant)}:s:${sid}:up`,
    upstreamSessionOpening: (tenant, sid, provider) => `${t(tenant)}:s:${sid}:up:${provider}:opening`,
    subscriptions: (tenant, sid) => `${t(tenant)}:s:${sid}:subs`,
    upstreamCalls: (tenant) => `${t(tenant)}:upcalls`,
    upstreamShared: (tenant) => `${t(tenant)}:upshared`,
    sessionStreams: (tenant, sid) => `${t(tenant)}:s:${sid}:gets`,
    eventLog: (tenant, sid, streamId) => `${t(tenant)}:s:${sid}:ev:${streamId}`,
    eventLogIds: (tenant, sid) => `${t(tenant)}:s:${sid}:evs`,
    clientAnswer: (tenant, sid, id) => `${t(tenant)}:s:${sid}:ans:${id}`,
    clientCancel: (tenant, sid, id) => `${t(tenant)}:s:${sid}:cxl:${id}`,
    rerunClaim: (tenant, sid, streamId) => `${t(tenant)}:s:${sid}:ev:${streamId}:rerun`,
    sessionChannel: (tenant, sid) => `${t(tenant)}:s:${sid}:bus`,
    sessionsChannel: () => `${prefix}:sessions:bus`,
    replica: (id) => `${prefix}:replica:${id}`,
    heldCall: (tenant, id) => `${t(tenant)}:held:${id}`,
    heldCallChannel: (tenant, id) => `${t(tenant)}:held:${id}:bus`,
    heldCallEnd: (tenant, id) => `${t(tenant)}:held:${id}:end`,
    connectElicitation: (tenant, id) => `${t(tenant)}:elicit:${id}`,
    sessionIndex: (tenant) => `${t(tenant)}:sessions`,
    sessionOwner: (tenant, owner) => `${t(tenant)}:sessions:${owner}`,
    task: (tenant, id) => `${t(tenant)}:task:${id}`,
    callerTasks: (tenant, owner) => `${t(tenant)}:tasks:${owner}`,
    liveTasks: (tenant, owner) => `${t(tenant)}:tasks:live${owner === undefined ? "" : `:${owner}`}`,
    taskPolls: (tenant, owner, window) => `${t(tenant)}:rl:tasks:${owner}:${window}`,
    tasksChannel: () => `${prefix}:tasks:bus`,
    clientTask: (tenant, provider, id) => `${t(tenant)}:ctask:${provider}:${id}`,
    clientTaskCount: (tenant, provider, session) => `${t(tenant)}:ctasks:${provider}:${session}`,
    tenantAudit: (tenant) => `${t(tenant)}:audit`,
    conflictNoted: (tenant, digest) => `${t(tenant)}:conflict:${digest}`,
    pins: (tenant, provider) => `${t(tenant)}:pins:${provider}`,
    openapiDocument: (tenant, provider) => `${t(tenant)}:openapi:${provider}`,
    pinsPending: (tenant, provider) => `${t(tenant)}:pins:${provider}:pending`,
    pinNotices: (tenant, provider, change) => `${t(tenant)}:pins:${provider}:notices:${change}`,
    pinNoted: (tenant, provider, digest) => `${t(tenant)}:pinned:${provider}:${digest}`,
    platformAudit: () => `${prefix}:{admin}:audit`,
    auditChain: (tenant) => {
      const stream = tenant === null ? `${prefix}:{admin}:audit` : `${t(tenant)}:audit`;
      return { stream, head: `${stream}:head`, anchor: `${stream}:anchor` };
    },
    apiKey: (hash) => `${prefix}:{admin}:key:${hash}`,
    apiKeyIndex: (scope) => `${prefix}:{admin}:keys:${scope}`,
    user: (tenant, username) => `${t(tenant)}:user:${username}`,
    userIndex: (tenant) => `${t(tenant)}:users`,
    grant: (tenant, id) => `${t(tenant)}:oauth:grant:${id}`,
    grantIndex: (tenant) => `${t(tenant)}:oauth:grants`,
    authCode: (tenant, hash) => `${t(tenant)}:oauth:code:${hash}`,
    refreshToken: (tenant, hash) => `${t(tenant)}:oauth:rt:${hash}`,
    consents: (tenant, sub, clientHash) => `${t(tenant)}:oauth:consents:${sub}:${clientHash}`,
    oauthFlow: (id) => `${prefix}:{oauth}:flow:${id}`,
    tenant: (tenant) => `${t(tenant)}:tenant`,
    tenantIndex: () => `${prefix}:tenants`,
    tenantsChannel: () => `${prefix}:tenants:bus`,
    replicationProbe: () => `${prefix}:replication-probe`,
    listenChannel: (tenant) => `${t(tenant)}:listen:bus`,
    oauthSigningKeys: () => `${prefix}:{oauth}:signing-keys`,
    revokedToken: (jti) => `${prefix}:{oauth}:revoked:${jti}`,
    revokedTokens: () => `${prefix}:{oauth}:revoked`,
    revocationsChannel: () => `${prefix}:{oauth}:revoked:bus`,
    oauthClient: (clientId) => `${prefix}:{oauth}:client:${clientId}`,
    oauthTenantClients: (tenant) => `${t(tenant)}:oauth:clients`,
    mcpRateLimit: (tenant, subject, window) => `${t(tenant)}:rl:${subject}:${window}`,
    oauthRateLimit: (endpoint, subject, window) => `${prefix}:{oauth}:rl:${endpoint}:${subject}:${window}`,
    fetchFailures: (target) => `${prefix}:{egress}:backoff:${target}:n`,
    fetchBlocked: (target) => `${prefix}:{egress}:backoff:${target}:until`,
    oauthRegistrations: (subject, hour) => `${prefix}:{oauth}:registered:${subject}:${hour}`,
    loginFailures: (tenant, account, subject) =>
      `${t(tenant)}:login:f:${account}${subject === undefined ? "" : `:${subject}`}`,
    loginBlock: (tenant, account, subject) =>
      `${t(tenant)}:login:b:${account}${subject === undefined ? "" : `:${subject}`}`,
    loginAddresses: (tenant, account) => `${t(tenant)}:login:a:${account}`,
    loginKnown: (tenant, account, subject) => `${t(tenant)}:login:k:${account}:${subject}`,
    account: (tenant, user, provider) => `${t(tenant)}:acct:${user}:${provider}`,
    accountUsers: (tenant, provider) => `${t(tenant)}:acct:users:${provider}`,
    accountProviders: (tenant, user) => `${t(tenant)}:acct:providers:${user}`,
    accountRegistration: (tenant, provider, issuer) => `${t(tenant)}:acct:reg:${provider}:${issuer}`,
    accountRegistrations: (tenant, provider) => `${t(tenant)}:acct:regs:${provider}`,
    accountRefreshLock: (tenant, user, provider) => `${t(tenant)}:acct:${user}:${provider}:lock`,
    accountFlow: (state) => `${prefix}:{accounts}:flow:${state}`,
    accountSession: (hash) => `${prefix}:{accounts}:session:${hash}`,
    accountsChannel: () => `${prefix}:{accounts}:bus`,
    platformUser: (username) => `${prefix}:{admin}:puser:${username}`,
    platformUserIndex: () => `${prefix}:{admin}:pusers`,
    tenantAdmins: (tenant) => `${t(tenant)}:admins`,
    consoleSession: (hash) => `${prefix}:{console}:session:${hash}`,
  };
}
