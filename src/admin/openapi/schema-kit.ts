// Helpers the admin API's JSON Schemas are written with (OpenAPI 3.1 = JSON Schema 2020-12):
// references to components, the records' schemas as components, strings, closed objects, arrays.
import type { TSchema } from "@sinclair/typebox";
import { componentName, ownDescription } from "../../records/schema-kit.js";

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/**
 * A record schema as plain JSON, each other named schema inside it a reference to its component
 * (with the description the member gives it, if its own).
 */
export function asComponent(schema: TSchema): Schema {
  const lift = (value: unknown, top: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => lift(v, false));
    if (value === null || typeof value !== "object") return value;
    const name = top ? undefined : componentName(value);
    const description = ownDescription(value);
    if (name !== undefined) return description === undefined ? ref(name) : { ...ref(name), description };
    const lifted = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, lift(v, false)]));
    return withMapping(value as Schema, lifted);
  };
  return lift(schema, true) as Schema;
}

/**
 * A discriminator without a mapping means "the tag is the component's name" (OpenAPI 3.1, Discriminator
 * Object); the records' tags are their `const` values instead (`"kind": "mcp"`), so each is mapped to
 * the component that carries it, and generated clients type the tag as the API spells it.
 */
function withMapping(raw: Schema, lifted: Schema): Schema {
  const discriminator = raw.discriminator as { propertyName: string; mapping?: unknown } | undefined;
  if (!discriminator || discriminator.mapping !== undefined || !Array.isArray(raw.oneOf)) return lifted;
  const mapping: Record<string, string> = {};
  for (const branch of raw.oneOf as Schema[]) {
    const name = componentName(branch);
    const tag = (branch.properties as Record<string, Schema> | undefined)?.[discriminator.propertyName]
      ?.const;
    if (name === undefined || typeof tag !== "string") return lifted;
    mapping[tag] = `#/components/schemas/${name}`;
  }
  return { ...lifted, discriminator: { ...discriminator, mapping } };
}

/** Named record schemas as components, by name, in the order given. */
export function components(...schemas: TSchema[]): Record<string, Schema> {
  return Object.fromEntries(schemas.map((s) => [componentName(s) ?? "", asComponent(s)]));
}

export const str = (description: string, extra: Schema = {}): Schema => ({
  type: "string",
  description,
  ...extra,
});
export const obj = (
  properties: Record<string, Schema>,
  required: string[] = [],
  extra: Schema = {},
): Schema => ({
  type: "object",
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
  ...extra,
});
export const list = (items: Schema, description: string): Schema => ({ type: "array", items, description });

export const jsonObject = (description: string): Schema => ({ type: "object", description });
