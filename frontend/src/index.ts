// Entry point loaded by TensorBoard's plugin iframe: import("./index.js").then(m => m.render()).
import { App } from "./app";
import { markOnce } from "./marks";

markOnce("module");

export function render(): void {
  try {
    new App().mount();
  } catch (e) {
    const div = document.createElement("div");
    div.textContent = `Graph Explorer failed to start: ${(e as Error).message}`;
    div.style.cssText = "padding:16px;color:#b3261e;font:14px sans-serif";
    document.body.appendChild(div);
    document.body.dataset.status = "error";
  }
}
