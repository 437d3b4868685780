// The naming rules records share: tenant, provider and server ids (slugs), and the names clients
// see for tools and prompts.
import { Type } from "@sinclair/typebox";
import { named } from "./schema-kit.js";

export const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Exposed tool and prompt names: 1–64 characters (conformance `tools-name-format`). */
export const EXPOSED_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export const Slug = named(
  "Slug",
  Type.String({
    pattern: SLUG.source,
    description: "A lowercase slug: a–z, 0–9 and -, starting with a letter or digit, at most 63 characters.",
  }),
);
