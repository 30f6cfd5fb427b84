// Light/dark: follow TensorBoard's own setting (the parent page's body.dark-mode) when it is
// reachable, else the browser's prefers-color-scheme.
export function prefersDark(): boolean {
  try {
    const parentBody = window.parent && window.parent !== window ? window.parent.document.body : null;
    if (parentBody) return parentBody.classList.contains("dark-mode");
  } catch {
    /* cross-origin parent: fall through */
  }
  return !!window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
}

/** Calls onChange(dark) whenever the theme may have changed. */
export function watchTheme(onChange: (dark: boolean) => void): void {
  try {
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => onChange(prefersDark()));
  } catch {
    /* old browser */
  }
  try {
    const parentBody = window.parent && window.parent !== window ? window.parent.document.body : null;
    if (parentBody) {
      new MutationObserver(() => onChange(prefersDark())).observe(parentBody, {
        attributes: true,
        attributeFilter: ["class"],
      });
    }
  } catch {
    /* cross-origin parent */
  }
}
