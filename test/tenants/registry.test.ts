// The tenant registry's catalogs per capability profile (docs/architecture.md §3), with providers of
// this test's own whose lists depend on the profile (a Provider is an interface): lists and routes
// per profile, single-flight preparation, the bound on profiles however clients spell their
// capabilities, per-profile invalidation, run-time conflicts reported once, and announcements.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TenantConfig } from "../../src/records/tenant.js";
import {
  EMPTY_ENTRIES,
  type ListChangeKind,
  type Provider,
  type ProviderEvents,
} from "../../src/providers/types.js";
import type { CapabilityProfile } from "../../src/protocol/profile.js";
import { FULL_PROFILE, NO_PROFILE, profileOf } from "../../src/protocol/profile.js";
import { profileFromLabel, profileLabel } from "../../src/protocol/profile-names.js";
import { Secrets } from "../../src/crypto/secrets.js";
import { createKeys } from "../../src/store/keys.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { TenantRegistry } from "../../src/tenants/registry.js";
import type { ProviderConflict } from "../../src/providers/catalog.js";
import { MAX_PROFILES } from "../../src/tenants/profile-views.js";
import { TenantStore } from "../../src/tenants/tenant-store.js";

const quiet = { warn: () => undefined, info: () => undefined } as unknown as FastifyBaseLogger;
const SAMPLING = profileOf({ sampling: {} });
const tool = (name: string): Tool => ({ name, inputSchema: { type: "object" } });

interface FakeOptions {
  /** Tools every client sees. */
  readonly tools: readonly string[];
  /** Tools only clients that declared sampling see (as server-everything does). */
  readonly sampling?: readonly string[];
  /** Lists per profile (implements prepare) — false for a provider with fixed lists. */
  readonly prepares?: boolean;
  /** Lists raised on start (as an upstream's first list_changed). */
  readonly changesOnStart?: boolean;
}

/** A provider whose lists depend on the profile, counting the profiles it is asked to prepare. */
function fake(id: string, opts: FakeOptions) {
  const prepared: string[] = [];
  /** "start", "prepare", "close" in the order they happened. */
  const calls: string[] = [];
  let events: ProviderEvents | undefined;
  let gated = opts.sampling ?? [];
  const provider: Provider = {
    id,
    kind: "mcp",
    prefix: "",
    healthy: true,
    entries: (profile?: CapabilityProfile) => ({
      ...EMPTY_ENTRIES,
      tools: [...opts.tools, ...(profile?.capabilities.sampling ? gated : [])].map(tool),
    }),
    start: async (e) => {
      calls.push("start");
      await new Promise((resolve) => setTimeout(resolve, 5));
      events = e;
      if (opts.changesOnStart) e.listChanged("tools");
    },
    close: async () => void calls.push("close"),
    callTool: async () => ({ content: [{ type: "text", text: id }] }),
    getPrompt: async () => ({ messages: [] }),
    readResource: async () => ({ contents: [] }),
    complete: async () => ({ completion: { values: [] } }),
  };
  if (opts.prepares !== false)
    provider.prepare = async (profile) => {
      prepared.push(profile.key);
      calls.push("prepare");
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
  return {
    provider,
    prepared,
    calls,
    /** The upstream's gated tools change, under one profile or all. */
    change(tools: readonly string[], profile?: CapabilityProfile) {
      gated = tools;
      events?.listChanged("tools", profile);
    },
  };
}

type Fake = ReturnType<typeof fake>;

async function registryWith(make: (id: string) => Fake) {
  const announced: ListChangeKind[] = [];
  const conflicts: Array<{ provider: string; conflict: ProviderConflict }> = [];
  const built = new Map<string, Fake>();
  const records = new TenantStore(
    new MemoryStore(),
    createKeys("p"),
    new Secrets("0123456789abcdef0123456789abcdef"),
  );
  const registry = new TenantRegistry({
    records,
    log: quiet,
    createProvider: (tenant, index) => {
      const id = tenant.providers[index]!.id;
      const f = make(id);
      built.set(id, f);
      return f.provider;
    },
    onListChanged: (_tenant, kind) => announced.push(kind),
    onConflict: (_tenant, provider, conflict) => conflicts.push({ provider, conflict }),
  });
  await registry.start();
  // Writes the record as the admin API does (a seed keeps providers it does not list), then reloads.
  const seed = async (ids: string[]) => {
    await records.mutate("acme", () => tenantOf(ids));
    await registry.reload("acme");
  };
  return { registry, announced, conflicts, built, seed, runtime: () => registry.get("acme")! };
}

// The record only tells the registry which providers exist: the fakes ignore the rest.
const tenantOf = (ids: string[]): TenantConfig => ({
  id: "acme",
  auth: "none",
  providers: ids.map((id) => ({ id, kind: "static", prompts: [] })),
});

const names = (tools: readonly Tool[]) => tools.map((t) => t.name);

describe("catalogs per capability profile (registry)", () => {
  it("lists and routes each profile as its clients see it", async () => {
    const r = await registryWith((id) => fake(id, { tools: ["echo"], sampling: ["summarize"] }));
    await r.seed(["up"]);
    const t = r.runtime();
    assert.deepEqual(names((await t.catalogFor(NO_PROFILE)).tools), ["echo"]);
    const sampling = await t.catalogFor(SAMPLING);
    assert.deepEqual(names(sampling.tools), ["echo", "summarize"]);
    assert.equal(sampling.tool("summarize")?.provider.id, "up");
    assert.equal(
      (await t.catalogFor(NO_PROFILE)).tool("summarize"),
      undefined,
      "not routed without sampling",
    );
    await r.registry.close();
  });

  it("prepares a profile once on this replica, however many requests ask at once", async () => {
    const r = await registryWith((id) => fake(id, { tools: ["echo"], sampling: ["summarize"] }));
    await r.seed(["up"]);
    const before = r.built.get("up")!.prepared.length;
    const all = await Promise.all(Array.from({ length: 20 }, async () => r.runtime().catalogFor(SAMPLING)));
    assert.equal(new Set(all).size, 1, "one catalog for all of them");
    assert.deepEqual(r.built.get("up")!.prepared.slice(before), [SAMPLING.key]);
    const again = r.runtime().catalogFor(SAMPLING);
    assert.ok(!(again instanceof Promise), "a current catalog is returned at once");
    await r.registry.close();
  });

  it("keeps at most MAX_PROFILES catalogs whatever the clients declare (hostile spellings)", async () => {
    const r = await registryWith((id) => fake(id, { tools: ["echo"], sampling: ["summarize"] }));
    await r.seed(["up"]);
    const t = r.runtime();
    // Every shape a profile can take, and a thousand spellings that reduce to a few of them.
    const shapes = profileShapes();
    assert.ok(shapes.length > MAX_PROFILES * 4, `${shapes.length} shapes`);
    for (const caps of shapes) await t.catalogFor(profileOf(caps));
    for (let i = 0; i < 1000; i++)
      await t.catalogFor(profileOf({ experimental: { [`x${i}`]: {} }, sampling: { [`k${i}`]: {} } }));
    assert.ok(t.profileCount <= MAX_PROFILES, `${t.profileCount} profiles kept`);
    // The no-capabilities catalog is never dropped, and an evicted profile is prepared again.
    assert.ok(!(t.catalogFor(NO_PROFILE) instanceof Promise));
    assert.deepEqual(names((await t.catalogFor(SAMPLING)).tools), ["echo", "summarize"]);
    await r.registry.close();
  });

  it("rebuilds only the profile a change names, every profile for a change without one", async () => {
    const r = await registryWith((id) => fake(id, { tools: ["echo"], sampling: ["summarize"] }));
    await r.seed(["up"]);
    const t = r.runtime();
    await t.catalogFor(SAMPLING);
    const full = await t.catalogFor(FULL_PROFILE);
    r.announced.length = 0;
    r.built.get("up")!.change(["summarize", "translate"], SAMPLING);
    assert.deepEqual(names((await t.catalogFor(SAMPLING)).tools), ["echo", "summarize", "translate"]);
    assert.equal(await t.catalogFor(FULL_PROFILE), full, "another profile's catalog is kept");
    assert.deepEqual(r.announced, ["tools"]);
    r.built.get("up")!.change(["translate"]);
    assert.deepEqual(names((await t.catalogFor(FULL_PROFILE)).tools), ["echo", "translate"]);
    assert.deepEqual(names((await t.catalogFor(SAMPLING)).tools), ["echo", "translate"]);
    assert.deepEqual(r.announced, ["tools", "tools"]);
    await r.registry.close();
  });

  it("hides a gated tool that collides at run time under its profile only, and reports it once", async () => {
    const r = await registryWith((id) =>
      id === "a"
        ? fake(id, { tools: ["search"], prepares: false })
        : fake(id, { tools: ["echo"], sampling: ["search"] }),
    );
    await r.seed(["a", "b"]);
    const t = r.runtime();
    assert.deepEqual(r.registry.conflicts("acme", "b"), [], "no conflict without sampling");
    const sampling = await t.catalogFor(SAMPLING);
    assert.deepEqual(names(sampling.tools), ["search", "echo"]);
    assert.equal(sampling.tool("search")?.provider.id, "a", "the first provider keeps the name");
    const expected = { kind: "tool", name: "search", heldBy: "a", profile: "sampling" };
    assert.deepEqual(r.registry.conflicts("acme", "b"), [expected]);
    assert.deepEqual(r.conflicts, [{ provider: "b", conflict: expected }]);
    // Rebuilt after a list change: still hidden, not reported again.
    r.built.get("b")!.change(["search"], SAMPLING);
    assert.equal(r.conflicts.length, 1);
    assert.deepEqual(r.registry.conflicts("acme", "a"), [], "the holder has no conflict");
    await r.registry.close();
  });

  it("a reload prepares new providers under every profile in use and announces each change once", async () => {
    // Requests keep coming while the reload runs: none may reach the new provider before its start.
    let polling = true;
    const r = await registryWith((id) =>
      fake(id, { tools: [`${id}-echo`], sampling: [`${id}-gated`], changesOnStart: true }),
    );
    await r.seed(["a"]);
    await r.runtime().catalogFor(SAMPLING);
    r.announced.length = 0;
    const poll = (async () => {
      for (const caps of [{ roots: {} }, { tasks: {} }, { sampling: {} }]) {
        if (!polling) break;
        await r.runtime().catalogFor(profileOf(caps));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await r.seed(["a", "b"]);
    polling = false;
    await poll;
    assert.equal(r.built.get("b")!.calls[0], "start");
    const b = r.built.get("b")!;
    // Every profile in use, the ones first used during the reload too, and each once.
    assert.deepEqual(
      [...b.prepared].sort(),
      [NO_PROFILE.key, SAMPLING.key, profileOf({ roots: {} }).key, profileOf({ tasks: {} }).key].sort(),
    );
    assert.deepEqual(b.calls.slice(0, 2), ["start", "prepare"], "prepared once started");
    const t = r.runtime();
    const sampling = t.catalogFor(SAMPLING);
    assert.ok(!(sampling instanceof Promise), "ready when the reload ends");
    assert.deepEqual(names(sampling.tools), ["a-echo", "a-gated", "b-echo", "b-gated"]);
    assert.deepEqual(r.announced, ["tools"], "the new provider's own change on start is not announced twice");
    // Deleted, then added again: one announcement each.
    r.announced.length = 0;
    await r.seed(["a"]);
    assert.deepEqual(r.announced, ["tools"]);
    await r.seed(["a", "b"]);
    assert.deepEqual(r.announced, ["tools", "tools"]);
    await r.registry.close();
  });

  it("a profile first listed with nothing to prepare is prepared once a provider needs it", async () => {
    const r = await registryWith((id) =>
      id === "a"
        ? fake(id, { tools: ["echo"], prepares: false })
        : fake(id, { tools: ["b-echo"], sampling: ["b-gated"] }),
    );
    await r.seed(["a"]);
    // Nothing to wait for: the catalog is ready in the same turn.
    assert.deepEqual(names((await r.runtime().catalogFor(SAMPLING)).tools), ["echo"]);
    await r.seed(["a", "b"]);
    assert.deepEqual(names((await r.runtime().catalogFor(SAMPLING)).tools), ["echo", "b-echo", "b-gated"]);
    assert.ok(r.built.get("b")!.prepared.includes(SAMPLING.key));
    await r.registry.close();
  });

  it("says a catalog varies when a provider lists per profile", async () => {
    const fixed = await registryWith((id) => fake(id, { tools: ["echo"], prepares: false }));
    await fixed.seed(["up"]);
    assert.equal((await fixed.runtime().catalogFor(SAMPLING)).varies, false);
    await fixed.registry.close();
    const gated = await registryWith((id) => fake(id, { tools: ["echo"], sampling: ["x"] }));
    await gated.seed(["up"]);
    assert.equal((await gated.runtime().catalogFor(NO_PROFILE)).varies, true);
    await gated.registry.close();
  });
});

describe("profile labels", () => {
  it("reads back every profile shape it writes", () => {
    for (const caps of profileShapes()) {
      const profile = profileOf(caps);
      assert.equal(profileFromLabel(profileLabel(profile))?.key, profile.key, profileLabel(profile));
    }
    assert.equal(profileLabel(NO_PROFILE), "none");
    assert.equal(
      profileLabel(FULL_PROFILE),
      "sampling.context,sampling.tools,elicitation.form,elicitation.url,roots.listChanged,tasks.list,tasks.cancel,tasks.sampling,tasks.elicitation,ui",
    );
  });

  it("refuses words that are not capability names", () => {
    for (const bad of ["", "sampling,", "Sampling", "sampling.foo", "ui ,roots", "none,roots", "__proto__"])
      assert.equal(profileFromLabel(bad), undefined, JSON.stringify(bad));
  });
});

/** Every distinct profile shape: sampling × elicitation × roots × tasks × MCP Apps. */
function profileShapes(): Array<Record<string, unknown>> {
  const sampling = [undefined, {}, { context: {} }, { tools: {} }, { context: {}, tools: {} }];
  const elicitation = [undefined, {}, { form: {} }, { url: {} }, { form: {}, url: {} }];
  const roots = [undefined, {}, { listChanged: true }];
  const tasks = [undefined, {}];
  const ui = [undefined, {}, { mimeTypes: ["text/html;profile=mcp-app"] }];
  const out: Array<Record<string, unknown>> = [];
  for (const s of sampling)
    for (const e of elicitation)
      for (const r of roots)
        for (const t of tasks)
          for (const u of ui)
            out.push({
              ...(s && { sampling: s }),
              ...(e && { elicitation: e }),
              ...(r && { roots: r }),
              ...(t && { tasks: t }),
              ...(u && { extensions: { "io.modelcontextprotocol/ui": u } }),
            });
  return out;
}
