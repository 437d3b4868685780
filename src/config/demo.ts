// The built-in `demo` tenant, served when no bootstrap file is configured: the seed project's
// code-review prompt and quote resource, as one static provider open without sign-in.
import type { TenantConfig } from "../records/tenant.js";

const LANGUAGES = ["typescript", "javascript", "python", "go", "rust", "java", "c", "c++", "ruby", "php"];

const QUOTES = [
  "Chi va piano va sano e va lontano — Who goes slowly goes safely and far.",
  "Meglio tardi che mai — Better late than never.",
  "Chi trova un amico trova un tesoro — Whoever finds a friend finds a treasure.",
  "L'appetito vien mangiando — Appetite comes with eating.",
  "Non tutte le ciambelle riescono col buco — Not every doughnut comes out with a hole.",
];

/** The demo tenant: `/mcp/demo`, no authentication, one static provider. */
export function demoTenant(): TenantConfig {
  return {
    id: "demo",
    auth: "none",
    name: "demo",
    providers: [
      {
        id: "demo",
        kind: "static",
        prompts: [
          {
            name: "code-review",
            title: "Code review",
            description: "Asks the model to review code in a given language.",
            arguments: [
              {
                name: "language",
                description: "Programming language of the code",
                required: true,
                values: LANGUAGES,
              },
            ],
            messages: [
              {
                role: "user",
                text: "Please review the following {{language}} code. Point out bugs, unclear names and missing tests, most important first.",
              },
            ],
          },
        ],
        resources: [
          {
            uri: "bacio:///quote",
            name: "quote",
            title: "Italian proverbs",
            description: "A few Italian proverbs with their translations.",
            mimeType: "text/plain",
            text: QUOTES.join("\n") + "\n",
          },
        ],
        resourceTemplates: [
          {
            uriTemplate: "bacio:///greeting/{name}",
            name: "greeting",
            title: "Greeting",
            description: "An Italian greeting for whoever is named in the URI.",
            mimeType: "text/plain",
            text: "Ciao, {name}! Benvenuto — welcome.\n",
            values: { name: ["Ada", "Grace", "Linus", "Margaret"] },
          },
        ],
      },
    ],
  };
}
