// A provider's task marks as Portico reads them (docs/upstream-mcp.md "Task marks"): which mark a
// tool gets when names and patterns overlap, whatever order they were written in.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TaskMarks, taskMarksOf } from "../../src/records/task-marks.js";

describe("TaskMarks", () => {
  it("gives an exact name's mark over any pattern's", () => {
    const marks = new TaskMarks({ tools: { "*": "required", export_csv: "optional" } });
    assert.equal(marks.of("export_csv"), "optional");
    assert.equal(marks.of("export_pdf"), "required");
  });

  it("prefers the longer pattern, whichever was written first", () => {
    for (const tools of [
      { "export_*": "required", "*": "optional" },
      { "*": "optional", "export_*": "required" },
    ] as const) {
      const marks = new TaskMarks({ tools });
      assert.equal(marks.of("export_pdf"), "required");
      assert.equal(marks.of("ping"), "optional");
    }
  });

  it('takes "required" when two patterns of one length match', () => {
    for (const tools of [
      { "a*": "optional", "*z": "required" },
      { "*z": "required", "a*": "optional" },
    ] as const)
      assert.equal(new TaskMarks({ tools }).of("abz"), "required");
  });

  it("gives no mark where nothing matches: the tool keeps its upstream's", () => {
    const marks = new TaskMarks({ tools: { "export_*": "required" } });
    assert.equal(marks.of("import_csv"), undefined);
    assert.equal(marks.of("Export_csv"), undefined, "names match case-sensitively");
  });

  it("is none for a provider without marks or afterSeconds", () => {
    assert.equal(taskMarksOf({}), undefined);
    assert.equal(taskMarksOf({ tasks: {} }), undefined);
    assert.equal(taskMarksOf({ tasks: { tools: {} } }), undefined);
    assert.equal(taskMarksOf({ tasks: { afterSeconds: 20 } })?.afterSeconds, 20);
    assert.equal(taskMarksOf({ tasks: { afterSeconds: 20 } })?.of("anything"), undefined);
  });
});
