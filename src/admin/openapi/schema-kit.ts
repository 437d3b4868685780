// Helpers the admin API's JSON Schemas are written with (OpenAPI 3.1 = JSON Schema 2020-12):
// references to components, strings, closed objects, arrays.

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
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
