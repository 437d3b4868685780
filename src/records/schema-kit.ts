// Helpers the record schemas are written with (TypeBox, JSON Schema 2020-12), and the names of
// those the admin API's OpenAPI document lists as components: a schema named here is written once
// there and referenced ($ref) wherever a record uses it.
import { Type, type Static, type TSchema } from "@sinclair/typebox";

const COMPONENT = Symbol("portico.component");
const DESCRIPTION = Symbol("portico.component.description");

/** Marks `schema` as the component `name`; TypeBox keeps the mark on Optional and array copies. */
export function named<T extends TSchema>(name: string, schema: T): T {
  return Object.assign(schema, { [COMPONENT]: name, [DESCRIPTION]: schema.description });
}

/** The component name a schema was marked with. */
export function componentName(schema: object): string | undefined {
  return (schema as { [COMPONENT]?: string })[COMPONENT];
}

/** The description a copy of a component gives it where it is used, if its own. */
export function ownDescription(schema: object): string | undefined {
  const { description, [DESCRIPTION]: original } = schema as { description?: string; [DESCRIPTION]?: string };
  return description !== original ? description : undefined;
}

/** A named schema said of one member: the component, with this member's description. */
export const described = <T extends TSchema>(schema: T, description: string): T => ({
  ...schema,
  description,
});

/** When something happened: an RFC 3339 date-time in UTC. */
export const Timestamp = named(
  "Timestamp",
  Type.String({ description: "RFC 3339 date-time (UTC).", format: "date-time" }),
);

/** An object keyed by name (or URI), each value a `value`. */
export const keyed = <T extends TSchema>(value: T, description: string) =>
  Type.Unsafe<Record<string, Static<T>>>({ type: "object", description, additionalProperties: value });

/** Any JSON object (annotations, a JSON Schema), copied as it is. */
export const jsonObject = (description: string) =>
  Type.Unsafe<Record<string, unknown>>({ type: "object", description });
