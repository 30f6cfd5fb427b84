// The app's CSS, injected once as a <style> element (TensorBoard's CSP allows inline styles).
export const CSS = `
.gx-root{--bg:#fff;--fg:#202124;--muted:#5f6368;--border:#dadce0;--panel:#f8f9fa;--accent:#f57c00;--err-bg:#fdecea;--err-fg:#b3261e;--warn-bg:#fef7e0;--warn-fg:#7a4f01;
  position:fixed;inset:0;display:flex;flex-direction:column;font:13px Roboto,'Helvetica Neue',Arial,sans-serif;background:var(--bg);color:var(--fg)}
.gx-root.gx-dark{--bg:#202124;--fg:#e8eaed;--muted:#9aa0a6;--border:#3c4043;--panel:#292a2d;--accent:#ffb74d;--err-bg:#5c1f1b;--err-fg:#f8d7d4;--warn-bg:#4a3b10;--warn-fg:#fde293}
.gx-toolbar{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center;padding:6px 8px;border-bottom:1px solid var(--border);background:var(--panel)}
.gx-toolbar label{display:flex;gap:4px;align-items:center;color:var(--muted)}
.gx-toolbar select{max-width:170px}
.gx-root select,.gx-root input,.gx-root button{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--border);border-radius:3px;padding:2px 6px}
.gx-root button{cursor:pointer}
.gx-root button:hover{border-color:var(--accent)}
.gx-sep{width:1px;align-self:stretch;background:var(--border)}
.gx-progress{height:22px;display:none;align-items:center;gap:8px;padding:0 8px;border-bottom:1px solid var(--border);background:var(--panel)}
.gx-progress.gx-on{display:flex}
.gx-bar{flex:0 0 240px;height:6px;background:var(--border);border-radius:3px;overflow:hidden}
.gx-bar>div{height:100%;width:0;background:var(--accent);transition:width .15s}
.gx-error{display:none;padding:8px 12px;background:var(--err-bg);color:var(--err-fg);white-space:pre-wrap;word-break:break-word;border-bottom:1px solid var(--border)}
.gx-error.gx-on{display:block}
.gx-warn{display:none;padding:3px 10px;font-size:12px;color:var(--warn-fg);background:var(--warn-bg);border-bottom:1px solid var(--border);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.gx-warn.gx-on{display:block}
.gx-warn.gx-info{color:var(--muted);background:var(--panel)}
.gx-warn-icon{margin-right:6px}
.gx-toolbar .gx-check{gap:3px}
.gx-main{flex:1;display:flex;min-height:0}
.gx-stage{position:relative;flex:1;min-width:0}
.gx-canvas{position:absolute;inset:0;width:100%;height:100%;display:block;touch-action:none;cursor:grab}
.gx-canvas.gx-panning{cursor:grabbing}
.gx-minimap{position:absolute;right:10px;bottom:10px;width:200px;height:150px;border:1px solid var(--border);background:var(--bg);box-shadow:0 1px 4px rgba(0,0,0,.2);cursor:crosshair}
.gx-legend{position:absolute;left:10px;bottom:10px;max-width:340px;padding:6px 8px;background:var(--panel);border:1px solid var(--border);border-radius:3px;display:none;font-size:12px}
.gx-legend.gx-on{display:block}
.gx-legend div{display:flex;align-items:center;gap:6px;margin:2px 0;overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
.gx-swatch{flex:0 0 14px;height:10px;border:1px solid var(--border)}
.gx-edge-swatch{flex:0 0 22px;height:0}
.gx-grad{flex:0 0 80px;height:10px;border:1px solid var(--border)}
.gx-status{position:absolute;left:10px;top:8px;right:220px;color:var(--muted);font-size:12px;pointer-events:none;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.gx-empty{position:absolute;inset:0;display:none;align-items:center;justify-content:center;color:var(--muted);font-size:15px;text-align:center;padding:20px;white-space:pre-line;line-height:1.6}
.gx-empty.gx-on{display:flex}
.gx-side{flex:0 0 300px;border-left:1px solid var(--border);background:var(--panel);overflow:auto;padding:8px;display:flex;flex-direction:column;gap:10px}
.gx-side h3{margin:0 0 4px;font-size:13px;font-weight:600}
.gx-side section{min-width:0}
.gx-kv{display:grid;grid-template-columns:auto 1fr;gap:2px 8px;font-size:12px}
.gx-kv>span:nth-child(odd){color:var(--muted)}
.gx-kv>span{overflow-wrap:anywhere}
.gx-list{list-style:none;margin:0;padding:0;font-size:12px}
.gx-list li{padding:1px 0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.gx-link{color:var(--accent);cursor:pointer;text-decoration:underline;background:none!important;border:none!important;padding:0!important;font:inherit;text-align:left}
.gx-muted{color:var(--muted)}
.gx-count{min-width:4ch;font-size:12px;white-space:nowrap}
.gx-list li.gx-current{background:var(--border)}
.gx-list li.gx-hit{white-space:normal;padding:2px 2px}
.gx-hit-scope{font-size:11px;overflow-wrap:anywhere}
.gx-name{font-family:monospace;overflow-wrap:anywhere}
.gx-actions{display:flex;flex-wrap:wrap;gap:6px;margin-top:6px}
.gx-hidden-file{display:none}
.gx-canvas:focus-visible{outline:2px solid var(--accent);outline-offset:-2px}
.gx-sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.gx-help{position:absolute;right:10px;top:10px;display:none;padding:8px 10px;background:var(--panel);border:1px solid var(--border);border-radius:4px;box-shadow:0 2px 6px rgba(0,0,0,.25);font-size:12px;z-index:5}
.gx-help.gx-on{display:block}
.gx-help td{padding:1px 6px}
.gx-key{font-family:monospace;white-space:nowrap}
.gx-diff-table{border-collapse:collapse;font-size:12px;width:100%;table-layout:fixed}
.gx-diff-table td,.gx-diff-table th{border-bottom:1px solid var(--border);padding:1px 4px;text-align:left;overflow-wrap:anywhere;vertical-align:top}
.gx-diff-table td:first-child{color:var(--muted);width:30%}
.gx-diff-changed td{background:rgba(249,171,0,.22)}
.gx-nd-step{display:flex;align-items:center;gap:6px}
.gx-nd-step input{flex:1;min-width:0}
.gx-nd input[data-nd=thresholds]{flex:1;min-width:0}
.gx-pane2{display:none;flex:1;min-width:0;flex-direction:column;border-left:3px double var(--border)}
.gx-pane2.gx-on{display:flex}
.gx-pane2>.gx-stage{flex:1}
.gx-pane-head{display:flex;gap:8px;align-items:center;padding:3px 6px;background:var(--panel);border-bottom:1px solid var(--border);color:var(--muted);min-width:0}
.gx-pane-head label{display:flex;gap:4px;align-items:center;white-space:nowrap}
.gx-pane-head select{max-width:260px}
.gx-pane-note{flex:1;min-width:0;font-size:12px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.gx-minimap-small{width:140px;height:105px}
.gx-menu{position:absolute;right:10px;top:10px;display:none;width:340px;max-height:70%;overflow:auto;padding:8px 10px;background:var(--panel);border:1px solid var(--border);border-radius:4px;box-shadow:0 2px 6px rgba(0,0,0,.25);z-index:6}
.gx-menu.gx-on{display:block}
.gx-menu h3{margin:0 0 6px;font-size:13px}
.gx-menu .gx-list{margin:6px 0;max-height:300px;overflow:auto}
.gx-bookmark{display:flex;gap:8px;justify-content:space-between}
.gx-bookmark .gx-link{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}
.gx-del{color:var(--muted)!important;text-decoration:none!important}
.gx-bad{color:var(--err-fg);background:var(--err-bg);padding:2px 4px;overflow-wrap:anywhere}
`;
