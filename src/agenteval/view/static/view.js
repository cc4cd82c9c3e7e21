"use strict";
// agenteval view: sorting and filtering the runs table, the run page's paged trials table
// and its live updates. Every value from a run is set with textContent, never as HTML.
(function () {
  const body = document.body;

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function runsPage() {
    const fd = document.getElementById("f-dataset");
    const fa = document.getElementById("f-agent");
    const ft = document.getElementById("f-tag");
    const count = document.getElementById("f-count");
    const rows = Array.from(document.querySelectorAll("tr.run"));
    function apply() {
      let shown = 0;
      for (const tr of rows) {
        let tags = [];
        try { tags = JSON.parse(tr.dataset.tags || "[]"); } catch (e) { tags = []; }
        const ok = (!fd.value || tr.dataset.dataset === fd.value) &&
          (!fa.value || tr.dataset.agent === fa.value) &&
          (!ft.value || tags.indexOf(ft.value) >= 0);
        tr.hidden = !ok;
        if (ok) shown++;
      }
      count.textContent = shown + " of " + rows.length + " runs";
    }
    for (const s of [fd, fa, ft]) s.addEventListener("change", apply);
    for (const th of document.querySelectorAll("table.sortable th[data-sort]")) {
      th.tabIndex = 0;
      th.addEventListener("click", function () {
        const table = th.closest("table");
        const tbody = table.tBodies[0];
        const col = Array.prototype.indexOf.call(th.parentNode.children, th);
        const num = th.dataset.sort === "num";
        const dir = th.dataset.dir === "asc" ? -1 : 1;
        for (const o of th.parentNode.children) delete o.dataset.dir;
        th.dataset.dir = dir === 1 ? "asc" : "desc";
        const trs = Array.from(tbody.rows);
        trs.sort(function (x, y) {
          const a = x.cells[col], b = y.cells[col];
          if (num) return dir * (parseFloat(a.dataset.v) - parseFloat(b.dataset.v));
          return dir * a.textContent.localeCompare(b.textContent);
        });
        for (const tr of trs) tbody.appendChild(tr);
      });
    }
    apply();
  }

  function runPage() {
    const key = body.dataset.run;
    const poll = parseInt(body.dataset.poll || "2000", 10);
    const limit = 50;
    let offset = 0;
    let matched = 0;
    let known = -1;
    let seq = 0;
    const f = {
      failed: document.getElementById("f-failed"),
      tag: document.getElementById("f-tag"),
      cause: document.getElementById("f-cause"),
      q: document.getElementById("f-text"),
    };
    const tbody = document.querySelector("#trial-table tbody");
    const count = document.getElementById("f-count");
    const prev = document.getElementById("p-prev");
    const next = document.getElementById("p-next");

    function row(r) {
      const tr = el("tr", null, "trial st-" + r.status);
      const td = el("td");
      const a = el("a", r.case_id);
      a.href = "/trial?run=" + encodeURIComponent(key) + "&i=" + r.i;
      td.appendChild(a);
      tr.appendChild(td);
      tr.appendChild(el("td", r.repeat, "n"));
      const st = el("td");
      st.appendChild(el("span", r.cause ? "failure: " + r.cause : r.status, "chip s-" + r.status));
      tr.appendChild(st);
      const fs = el("td");
      for (const n of r.failed) fs.appendChild(el("span", n, "chip s-fail"));
      for (const n of r.errors) fs.appendChild(el("span", n + " (error)", "chip s-error"));
      tr.appendChild(fs);
      const tg = el("td");
      for (const t of r.tags) tg.appendChild(el("span", t, "chip tag"));
      tr.appendChild(tg);
      tr.appendChild(el("td", r.latency_s === null ? "–" : r.latency_s.toFixed(2) + " s", "n"));
      tr.appendChild(el("td", r.output, "answer"));
      return tr;
    }

    async function load() {
      const mine = ++seq;
      const p = new URLSearchParams({ run: key, offset: String(offset), limit: String(limit) });
      for (const k of Object.keys(f)) if (f[k].value) p.set(k, f[k].value);
      const res = await fetch("/api/trials?" + p.toString());
      if (!res.ok || mine !== seq) return;
      const data = await res.json();
      if (mine !== seq) return;
      matched = data.matched;
      tbody.replaceChildren(...data.rows.map(row));
      const end = Math.min(offset + data.rows.length, matched);
      count.textContent = (matched ? (offset + 1) + "–" + end + " of " : "0 of ") + matched +
        " matching (" + data.total + " trials" + (data.loading ? " read so far…" : "") + ")";
      if (data.loading) setTimeout(function () { if (mine === seq) load(); }, 300);
      prev.disabled = offset === 0;
      next.disabled = offset + limit >= matched;
      body.dataset.ready = "1";
    }

    let timer = null;
    function refilter() { offset = 0; load(); }
    for (const k of ["failed", "tag", "cause"]) f[k].addEventListener("change", refilter);
    f.q.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(refilter, 200);
    });
    prev.addEventListener("click", function () { offset = Math.max(0, offset - limit); load(); });
    next.addEventListener("click", function () { offset += limit; load(); });

    const live = document.getElementById("live");
    async function status() {
      try {
        const res = await fetch("/api/status?run=" + encodeURIComponent(key));
        if (res.ok) {
          const s = await res.json();
          for (const k of ["trials", "answered", "failed"]) {
            const e = document.querySelector('[data-kpi="' + k + '"]');
            if (e) e.textContent = String(s[k]);
          }
          if (s.writing) {
            live.textContent = "Being written (" + s.writing + "); this page updates as trials arrive.";
            live.hidden = false;
            live.classList.remove("hidden");
          } else if (known >= 0 && s.trials !== known) {
            live.textContent = "The run changed; reload for its updated summary.";
          } else if (!live.classList.contains("hidden")) {
            live.textContent = "No longer being written; reload for the final summary.";
          }
          if (known >= 0 && s.trials !== known) load();
          known = s.trials;
        }
      } catch (e) { /* the viewer stopped: keep what is shown */ }
      setTimeout(status, poll);
    }
    load();
    status();
  }

  if (body.dataset.page === "runs") runsPage();
  if (body.dataset.page === "run") runPage();
})();
