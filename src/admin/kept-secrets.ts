// Write-only secrets kept across admin writes (docs/security.md "Write-only secrets"): a
// {"set": true} in a PUT body or a merged PATCH keeps the stored secret only when it is matched by
// name and every place the write would send it is where it was sent before; otherwise 422.
import { mapSecrets, type SecretFields } from "../records/secret-fields.js";
import { invalid } from "./openapi/validator.js";
import type { SecretChanges } from "../audit/audit.js";

export const SET = Object.freeze({ set: true });

const NOTHING_STORED = 'has no stored value to keep: send the secret itself instead of {"set": true}';

interface FieldError {
  readonly pointer: string;
  readonly detail: string;
}

export function isSetMarker(v: unknown): boolean {
  return (
    typeof v === "object" &&
    v !== null &&
    (v as { set?: unknown }).set === true &&
    Object.keys(v).length === 1
  );
}

export interface Kept<T> {
  /** The checked record, every {"set": true} replaced by the stored secret. */
  readonly record: T;
  /** Pointers (in the input) of the secrets kept. */
  readonly kept: readonly string[];
}

interface Stored {
  readonly value: unknown;
  readonly destinations: readonly unknown[];
}

function storedSecrets(current: unknown, fields: SecretFields): Map<string, Stored> {
  const stored = new Map<string, Stored>();
  if (current === undefined) return stored;
  mapSecrets(
    current,
    (value, pointer) => {
      stored.set(fields.nameOf(current, pointer), {
        value,
        destinations: fields.destinationsOf(current, pointer),
      });
      return value;
    },
    fields.pointers,
  );
  return stored;
}

/**
 * The one rule for every write that may keep a secret: each {"set": true} takes the stored secret
 * of the same name, provided every destination the new record gives it lies within one it had.
 * A new destination needs the secret itself (422 naming each such field). `check` validates the
 * record first, so a malformed URL is reported as such rather than as a moved secret; nothing
 * is sent anywhere before this returns.
 */
export function keepSecrets<T>(
  input: unknown,
  current: unknown,
  fields: SecretFields,
  check: (record: unknown) => T,
): Kept<T> {
  const stored = storedSecrets(current, fields);
  const unknown: FieldError[] = [];
  const moved: FieldError[] = [];
  const kept: string[] = [];
  const record = mapSecrets(
    input,
    (value, pointer) => {
      if (!isSetMarker(value)) return value;
      const old = stored.get(fields.nameOf(input, pointer));
      if (typeof old?.value !== "string") {
        unknown.push({ pointer, detail: NOTHING_STORED });
        return value;
      }
      const away = fields
        .destinationsOf(input, pointer)
        .filter((next) => !old.destinations.some((was) => fields.within(next, was)));
      if (away.length > 0)
        moved.push({
          pointer,
          detail: `would be sent to ${away.map((m) => JSON.stringify(m)).join(", ")}, where the stored secret was never sent: send the secret itself again instead of {"set": true}`,
        });
      else kept.push(pointer);
      return old.value;
    },
    fields.pointers,
  );
  if (unknown.length > 0) throw invalid(unknown);
  const checked = check(record);
  if (moved.length > 0) throw invalid(moved);
  return { record: checked, kept };
}

/** Which secrets a write kept, set or removed; never their values. */
export function secretChanges(
  before: unknown,
  after: unknown,
  kept: readonly string[],
  fields: SecretFields,
): SecretChanges {
  const changes: SecretChanges = { kept: [], set: [], removed: [] };
  const names = new Set<string>();
  const visit = (record: unknown, fn: (pointer: string) => void) => {
    if (record !== undefined) mapSecrets(record, (value, pointer) => (fn(pointer), value), fields.pointers);
  };
  visit(after, (pointer) => {
    names.add(fields.nameOf(after, pointer));
    (kept.includes(pointer) ? changes.kept : changes.set).push(pointer);
  });
  visit(before, (pointer) => {
    if (!names.has(fields.nameOf(before, pointer))) changes.removed.push(pointer);
  });
  return changes;
}
