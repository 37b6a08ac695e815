/// The playground page's style sheet.
enum PlaygroundStyle {
    static let css = #"""
        * { box-sizing: border-box; }
        body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: #1f2328; background: #f6f8fa; }
        header { display: flex; gap: 12px; align-items: baseline; padding: 8px 16px; background: #fff;
          border-bottom: 1px solid #d0d7de; }
        h1 { font-size: 16px; margin: 0; }
        h2 { font-size: 13px; margin: 14px 0 6px; text-transform: uppercase; letter-spacing: .04em; color: #57606a; }
        main { display: grid; grid-template-columns: minmax(0, 1.4fr) minmax(0, 1fr) minmax(0, 0.9fr); gap: 12px;
          padding: 12px; }
        main > .wide { grid-column: 1 / -1; }
        .pane { background: #fff; border: 1px solid #d0d7de; border-radius: 6px; padding: 10px; min-width: 0; }
        .toolbar, .row { display: flex; gap: 8px; align-items: center; margin: 6px 0; flex-wrap: wrap; }
        .grow { flex: 1; display: flex; gap: 6px; align-items: center; }
        .grow input, .grow select { flex: 1; }
        .muted { color: #57606a; }
        .editor { display: flex; border: 1px solid #d0d7de; border-radius: 4px; height: 420px; overflow: hidden; }
        #gutter { margin: 0; padding: 6px 4px; min-width: 3.2em; text-align: right; color: #8c959f; background: #f6f8fa;
          overflow: hidden; font: 12px/1.5 ui-monospace, monospace; user-select: none; }
        #gutter .mark { font-weight: 700; }
        #gutter .mark.error { color: #fff; background: #cf222e; }
        #gutter .mark.warning { background: #fff8c5; color: #7d4e00; }
        textarea { font: 12px/1.5 ui-monospace, monospace; border: 0; padding: 6px; resize: none; width: 100%; }
        #policy { flex: 1; height: 100%; outline: none; }
        #response { height: 150px; border: 1px solid #d0d7de; border-radius: 4px; }
        ul { list-style: none; margin: 0; padding: 0; }
        #diagnostics li { font: 12px/1.5 ui-monospace, monospace; padding: 2px 6px; border-left: 3px solid transparent;
          cursor: pointer; white-space: pre-wrap; word-break: break-word; }
        #diagnostics li.error { border-color: #cf222e; background: #ffebe9; }
        #diagnostics li.warning { border-color: #bf8700; background: #fff8c5; }
        #diagnostics li.ok { border-color: #1a7f37; background: #dafbe1; cursor: default; }
        .error-line { color: #cf222e; font-family: ui-monospace, monospace; white-space: pre-wrap; }
        .group { border: 1px solid #d0d7de; border-radius: 4px; padding: 6px; margin-bottom: 6px; }
        .group-title { font-weight: 600; margin-bottom: 4px; }
        button.capability { font: 12px ui-monospace, monospace; margin: 2px; padding: 2px 6px; border: 1px solid #1a7f37;
          background: #dafbe1; border-radius: 10px; cursor: pointer; }
        .rules { color: #57606a; font-size: 11px; margin-left: 4px; }
        .denied { color: #cf222e; font-size: 12px; }
        pre { white-space: pre-wrap; word-break: break-word; font: 12px/1.5 ui-monospace, monospace; }
        #explanation { background: #f6f8fa; padding: 6px; border-radius: 4px; min-height: 3em; }
        .pass { color: #1a7f37; }
        .fail { color: #cf222e; }
        #scenario-matrix { overflow: auto; max-height: 640px; }
        table { border-collapse: collapse; font-size: 11px; }
        th, td { border: 1px solid #d0d7de; padding: 2px 4px; text-align: center; }
        th.capability-column { writing-mode: vertical-rl; transform: rotate(180deg); font-weight: 500; }
        td.scenario { text-align: left; white-space: nowrap; font-family: ui-monospace, monospace; }
        td.granted { background: #aceebb; }
        td.changed { outline: 2px solid #bf3989; outline-offset: -2px; font-weight: 700; }
        td.changed.granted { background: #ffd8f0; }

        """#
}
