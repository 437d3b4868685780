// What each session-era revision lacks and how results are fitted to it (docs/protocol-eras.md
// "Older revisions"): the changelogs of 2025-03-26 (audio, completions), 2025-06-18 (resource
// links, elicitation) and 2025-11-25 (tasks, priming events), good and hostile blocks.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  contentGapsOf,
  fitBlock,
  fitClientRequest,
  fitResult,
  gapsOf,
  offeredCapabilities,
  primesStreams,
  takenClientCapabilities,
} from "../../src/protocol/older-revisions.js";

const OLDEST = gapsOf("2024-11-05")!;
const MARCH = gapsOf("2025-03-26")!;
const AUDIO = { type: "audio", data: Buffer.alloc(3000).toString("base64"), mimeType: "audio/wav" };
const LINK = { type: "resource_link", uri: "file:///a.md", name: "a", mimeType: "text/markdown" };
const TEXT = { type: "text", text: "hi" };

describe("gapsOf", () => {
  it("2025-11-25 lacks nothing: nothing is walked for it", () => {
    assert.equal(gapsOf("2025-11-25"), undefined);
    assert.equal(contentGapsOf("2025-11-25"), undefined);
  });

  it("2025-06-18 lacks only the tasks capabilities: its content is not walked", () => {
    assert.deepEqual(gapsOf("2025-06-18")?.clientCapabilities, ["tasks"]);
    assert.deepEqual(gapsOf("2025-06-18")?.capabilities, ["tasks"]);
    assert.equal(contentGapsOf("2025-06-18"), undefined);
  });

  it("2025-03-26 lacks resource links, elicitation and tasks", () => {
    assert.deepEqual([...MARCH.contentTypes], ["resource_link"]);
    assert.deepEqual(MARCH.capabilities, ["tasks"]);
    assert.deepEqual(MARCH.clientCapabilities, ["elicitation", "tasks"]);
  });

  it("2024-11-05 also lacks audio and the completions capability", () => {
    assert.deepEqual([...OLDEST.contentTypes], ["audio", "resource_link"]);
    assert.deepEqual(OLDEST.capabilities, ["completions", "tasks"]);
    assert.equal(contentGapsOf("2024-11-05"), OLDEST);
  });

  it("a version never negotiated has no entry", () => {
    assert.equal(gapsOf("2023-01-01"), undefined);
    assert.equal(gapsOf("__proto__"), undefined);
  });
});

describe("capabilities", () => {
  const served = { logging: {}, completions: {}, tools: { listChanged: true } };

  it("completions is not offered to 2024-11-05, and the same object goes to the others", () => {
    assert.deepEqual(offeredCapabilities(served, OLDEST), { logging: {}, tools: { listChanged: true } });
    assert.equal(offeredCapabilities(served, MARCH), served);
    assert.equal(offeredCapabilities(served, undefined), served);
  });

  it("client capabilities its revision lacks are not taken; the others are kept as declared", () => {
    const declared = {
      sampling: {},
      roots: { listChanged: true },
      elicitation: {},
      tasks: {},
      extensions: {},
    };
    assert.deepEqual(takenClientCapabilities(declared, OLDEST), {
      sampling: {},
      roots: { listChanged: true },
      extensions: {},
    });
    assert.deepEqual(takenClientCapabilities(declared, gapsOf("2025-06-18")), {
      sampling: {},
      roots: { listChanged: true },
      elicitation: {},
      extensions: {},
    });
    const plain = { sampling: {} };
    assert.equal(takenClientCapabilities(plain, OLDEST), plain);
  });

  it("priming events only from 2025-11-25 on", () => {
    assert.equal(primesStreams("2025-11-25"), true);
    assert.equal(primesStreams("2025-06-18"), false);
    assert.equal(primesStreams("2024-11-05"), false);
  });
});

describe("fitResult", () => {
  it("turns the tools/call blocks a revision lacks into text saying what was left out", () => {
    const result = { content: [TEXT, AUDIO, LINK], structuredContent: { n: 1 }, isError: false };
    assert.deepEqual(fitResult("tools/call", result, OLDEST), {
      content: [
        TEXT,
        {
          type: "text",
          text: "[audio content (audio/wav, 3 KB) omitted: not supported by protocol 2024-11-05]",
        },
        {
          type: "text",
          text: '[resource link "a" (file:///a.md, text/markdown) omitted: not supported by protocol 2024-11-05]',
        },
      ],
      structuredContent: { n: 1 },
      isError: false,
    });
    // 2025-03-26 has audio: only the link changes.
    const fitted = fitResult("tools/call", result, MARCH);
    assert.deepEqual((fitted.content as unknown[])[1], AUDIO);
    assert.equal((fitted.content as Array<{ type: string }>)[2]!.type, "text");
  });

  it("returns the very result when nothing is lacking (no copy)", () => {
    const result = { content: [TEXT, AUDIO] };
    assert.equal(fitResult("tools/call", result, MARCH), result);
    const list = { tools: [{ name: "t", outputSchema: { type: "object" } }] };
    assert.equal(fitResult("tools/list", list, OLDEST), list, "later fields pass through");
  });

  it("fits each prompts/get message's content, keeping role and the rest", () => {
    const result = {
      description: "d",
      messages: [
        { role: "user", content: LINK },
        { role: "assistant", content: TEXT },
      ],
    };
    const fitted = fitResult("prompts/get", result, MARCH) as {
      description?: string;
      messages: Array<Record<string, unknown>>;
    };
    assert.equal(fitted.description, "d");
    assert.equal(fitted.messages[0]!.role, "user");
    assert.deepEqual(fitted.messages[0]!.content, {
      type: "text",
      text: '[resource link "a" (file:///a.md, text/markdown) omitted: not supported by protocol 2025-03-26]',
    });
    assert.equal(fitted.messages[1], result.messages[1]);
  });

  it("keeps a block's annotations and names a link by its title", () => {
    const annotations = { audience: ["user"], priority: 1 };
    assert.deepEqual(fitBlock({ ...LINK, title: "A doc", annotations }, MARCH), {
      type: "text",
      text: '[resource link "A doc" (file:///a.md, text/markdown) omitted: not supported by protocol 2025-03-26]',
      annotations,
    });
  });

  it("sizes audio in bytes, KB or MB", () => {
    const sized = (bytes: number) =>
      (fitBlock({ type: "audio", data: Buffer.alloc(bytes).toString("base64") }, OLDEST) as { text: string })
        .text;
    assert.equal(sized(10), "[audio content (10 bytes) omitted: not supported by protocol 2024-11-05]");
    assert.equal(sized(2047), "[audio content (2 KB) omitted: not supported by protocol 2024-11-05]");
    assert.equal(
      sized(3 * 1024 * 1024 + 1),
      "[audio content (3.0 MB) omitted: not supported by protocol 2024-11-05]",
    );
  });

  it("hostile blocks: malformed ones are said plainly, foreign shapes are left alone", () => {
    assert.deepEqual(fitBlock({ type: "audio", data: 42 }, OLDEST), {
      type: "text",
      text: "[audio content omitted: not supported by protocol 2024-11-05]",
    });
    assert.deepEqual(fitBlock({ type: "resource_link" }, MARCH), {
      type: "text",
      text: "[resource link omitted: not supported by protocol 2025-03-26]",
    });
    for (const odd of [null, "audio", 7, [AUDIO], { type: 3 }, { type: "toString" }, { type: "__proto__" }])
      assert.equal(fitBlock(odd, OLDEST), odd);
    const notAList = { content: "audio" };
    assert.equal(fitResult("tools/call", notAList, OLDEST), notAList);
    const badMessages = { messages: [null, 3, { role: "user" }] };
    assert.equal(fitResult("prompts/get", badMessages, OLDEST), badMessages);
  });
});

describe("fitClientRequest", () => {
  it("fits sampling messages, one block or a list of them", () => {
    const params = {
      messages: [
        { role: "user", content: AUDIO },
        { role: "user", content: [TEXT, AUDIO] },
      ],
      maxTokens: 10,
    };
    const fitted = fitClientRequest("sampling/createMessage", params, OLDEST) as typeof params;
    assert.equal(fitted.maxTokens, 10);
    assert.equal((fitted.messages[0]!.content as { type: string }).type, "text");
    assert.deepEqual(
      (fitted.messages[1]!.content as Array<{ type: string }>).map((b) => b.type),
      ["text", "text"],
    );
    assert.equal(fitClientRequest("sampling/createMessage", params, MARCH), params);
    assert.equal(fitClientRequest("roots/list", params, OLDEST), params);
    assert.equal(fitClientRequest("sampling/createMessage", undefined, OLDEST), undefined);
  });
});
