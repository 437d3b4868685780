// The console's entry (docs/console.md): one stylesheet (the console's own and uPlot's, bundled
// into a file: no inline styles, so the page runs under a CSP of 'self'), and the app.
import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { App } from "./app";

render(<App />, document.getElementById("app")!);
