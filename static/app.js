// Tandem's pages: the player, the forms' checks and the keyboard. No framework, no build step.
"use strict";

(function () {
  // ---- Settings a person keeps in this browser ---------------------------------
  var prefs = {
    get: function (name, dflt) {
      try { var v = window.localStorage.getItem("tandem." + name); return v === null ? dflt : v; } catch (e) { return dflt; }
    },
    set: function (name, value) {
      try { window.localStorage.setItem("tandem." + name, value); } catch (e) { /* private mode: not kept */ }
    }
  };
  function shortcutsOn() { return prefs.get("shortcuts", "on") !== "off"; }

  // Where typed keys are text (or, in the study's answers, pick an option by typing).
  function typing(t) {
    if (!t || !t.tagName) return false;
    var tag = t.tagName;
    if (tag === "TEXTAREA" || t.isContentEditable) return true;
    if (tag === "INPUT") return !["radio", "checkbox", "button", "submit", "range", "reset"].includes(t.type);
    if (tag === "SELECT") return !!(t.form && t.form.id === "study-form");
    return false;
  }

  // A control that changed something gives the keyboard back to the page's shortcuts.
  function giveFocusBack(el) {
    el.addEventListener("change", function () { if (document.activeElement === el) el.blur(); });
  }

  function fmt(t) { return (isFinite(t) ? t : 0).toFixed(3); }

  // ---- The player -----------------------------------------------------------------
  // A step goes to the middle of the next (or previous) frame when the page gives the
  // clip's frame rate and count (data-fps, data-frames on the video). Without them, or
  // for a variable rate, it goes to the next frame the browser presents, found from the
  // media times requestVideoFrameCallback reports.
  var EPS = 0.0005; // half a millisecond: inside any frame, past any rounding of a timestamp
  function makePlayer(video) {
    var fig = video.closest(".player") || document;
    var playBtn = fig.querySelector('[data-action="play"]');
    var playWord = playBtn && playBtn.querySelector(".play-word");
    var loop = document.getElementById("loop");
    var speed = document.getElementById("speed");
    var clock = document.getElementById("clock");
    var frameno = document.getElementById("frameno");
    var scrub = document.getElementById("scrub");
    var rvfc = "requestVideoFrameCallback" in HTMLVideoElement.prototype;

    var shown = null;          // media time of the frame on screen, as last presented
    var last = null;           // the last presentation's metadata, to learn a frame's length
    var gap = null;            // a frame's length seen between two adjacent frames (no rate known)
    var awaitingFrame = false; // a seek was made and its frame is not presented yet
    var pending = null;        // the frame a step (with a known rate) is going to
    var busy = 0;              // steps under way (without a known rate)
    var chain = Promise.resolve();
    var waiters = [];
    var dragging = false;
    var seeks = 0;             // seeks made, so that a late timer cannot end a newer one
    var target = null;         // where the last seek went

    function timing() {
      var fps = parseFloat(video.dataset.fps), n = parseInt(video.dataset.frames, 10);
      return (fps > 0 && isFinite(fps) && n > 0) ? { fps: fps, frames: n } : null;
    }
    function quietNow() { return !video.seeking && !awaitingFrame; }
    function poke() {
      if (!quietNow()) return;
      var w = waiters; waiters = [];
      w.forEach(function (f) { f(); });
    }
    function quiet() { return new Promise(function (r) { waiters.push(r); poke(); }); }
    function shownTime() { return shown !== null && quietNow() && video.paused ? shown : video.currentTime; }

    // Sets the position; false when it is already there (no frame will be presented).
    function setTime(t) {
      var d = video.duration;
      if (isFinite(d)) t = Math.min(t, d);
      t = Math.max(0, t);
      // (currentTime comes back rounded to the microsecond; a seek to where the video
      // already is can make a looping video start over.)
      if (Math.abs(video.currentTime - t) < 1e-5 && !video.seeking) return false;
      awaitingFrame = rvfc;
      seeks += 1;
      target = t;
      video.currentTime = t;
      return true;
    }
    function seekShown(t) {
      setTime(t);
      return quiet().then(function () { return shownTime(); });
    }

    if (rvfc) {
      var onFrame = function (_now, meta) {
        if (last && !video.paused && meta.presentedFrames === last.presentedFrames + 1) {
          var d = meta.mediaTime - last.mediaTime;
          if (d > 0.001 && gap === null) gap = d;
        }
        last = meta;
        shown = meta.mediaTime;
        // With a known rate, quick steps overlap: a frame of an earlier seek may come
        // after a later one began, and does not end the wait for the later one's frame.
        var tm = timing();
        if (!tm || target === null || Math.floor(target * tm.fps + 1e-6) === Math.round(shown * tm.fps)) {
          awaitingFrame = false;
        }
        show();
        poke();
        video.requestVideoFrameCallback(onFrame);
      };
      video.requestVideoFrameCallback(onFrame);
    }
    // Without a known rate, the frame on screen is known from the last one presented.
    // On a loaded machine the last frame presented before a pause can go unreported, so
    // the screen may be a frame past `shown`: going back to the frame `shown` names
    // makes the two agree before any step counts from it. `paused` changes at once and
    // its event comes later: until the event has come (and that seek has begun), the
    // frame on screen may still change, so the player is not settled.
    var pausedSeen = video.paused;
    video.addEventListener("pause", function () {
      pausedSeen = true;
      if (rvfc && !timing() && shown !== null && !video.seeking && !video.ended) setTime(shown + EPS);
    });
    video.addEventListener("play", function () { pausedSeen = false; });
    video.addEventListener("seeked", function () {
      if (!video.seeking) pending = null;
      if (awaitingFrame) {
        // The frame may be the one already on screen, which is not presented again.
        var mine = seeks;
        setTimeout(function () {
          if (mine === seeks && !video.seeking && awaitingFrame) { awaitingFrame = false; show(); poke(); }
        }, 400);
      }
      show();
      poke();
    });

    // The frame on screen (0-based), with a known rate.
    function frameIndex(tm) {
      var k;
      if (pending !== null) k = pending;
      else if (shown !== null && quietNow()) k = Math.round(shown * tm.fps);
      else k = Math.floor(video.currentTime * tm.fps + 1e-6);
      return Math.max(0, Math.min(tm.frames - 1, k));
    }
    function goToFrame(k) {
      var tm = timing();
      if (!tm) return;
      k = Math.max(0, Math.min(tm.frames - 1, k));
      if (pending === k) return; // already on its way there
      pending = k;
      if (!setTime((k + 0.5) / tm.fps)) pending = null;
      show();
    }

    // Without a known rate: one frame on, or back, from the one on screen.
    function stepPresented(dir) {
      video.pause();
      return quiet().then(function () {
        var m = shownTime();
        if (dir < 0) {
          return m <= EPS ? m : seekShown(Math.max(m - EPS, 0));
        }
        var dur = video.duration;
        if (!isFinite(dur)) return m;
        var probe = gap ? gap * 1.5 : 0.003;
        var next = function () {
          var t = Math.min(m + probe, dur - EPS);
          return seekShown(t).then(function (x) {
            if (x > m + 1e-6) return x;
            if (t >= dur - EPS) return null; // the last frame is on screen already
            probe *= 2;
            return next();
          });
        };
        return next().then(function (x) {
          if (x === null) return m;
          if (gap && x - m <= gap * 1.25) return x;
          // A frame may lie between the two: look just before the one found.
          var back = function (x) {
            return seekShown(x - EPS).then(function (y) {
              if (y > m + 1e-6 && y < x) return back(y);
              gap = x - m;
              return seekShown(x + EPS);
            });
          };
          return back(x);
        });
      });
    }
    function queue(work) {
      busy += 1;
      chain = chain.then(work).catch(function () {}).then(function () { busy -= 1; show(); });
      return chain;
    }

    function step(n) {
      var tm = timing();
      video.pause();
      if (tm) { goToFrame(frameIndex(tm) + n); return; }
      if (!rvfc) { setTime(video.currentTime + n / 30); return; }
      for (var i = 0; i < Math.abs(n); i++) queue(function () { return stepPresented(n < 0 ? -1 : 1); });
    }
    function first() {
      video.pause();
      if (timing()) goToFrame(0);
      else queue(function () { return seekShown(0); });
    }
    function lastFrame() {
      var tm = timing();
      video.pause();
      if (tm) goToFrame(tm.frames - 1);
      else if (isFinite(video.duration)) queue(function () { return seekShown(video.duration - EPS); });
    }
    // Goes to a time: with a known rate, to the middle of the frame there.
    function seekTo(t) {
      var tm = timing();
      if (tm) goToFrame(Math.floor(t * tm.fps + 1e-6));
      else setTime(t);
    }

    function show() {
      var d = video.duration;
      var t = shownTime();
      if (clock) clock.textContent = fmt(t) + " / " + fmt(d) + " s";
      var tm = timing();
      if (frameno) {
        frameno.hidden = !tm;
        if (tm) frameno.textContent = "frame " + (frameIndex(tm) + 1) + " / " + tm.frames;
      }
      if (scrub && !dragging) {
        if (isFinite(d) && d > 0) scrub.max = String(d);
        scrub.value = String(t);
      }
      if (playWord) playWord.textContent = video.paused ? "Play" : "Pause";
      markTile();
    }
    ["timeupdate", "play", "pause", "loadedmetadata", "durationchange"].forEach(function (ev) {
      video.addEventListener(ev, show);
    });

    if (scrub) {
      scrub.addEventListener("pointerdown", function () { dragging = true; });
      document.addEventListener("pointerup", function () { if (dragging) { dragging = false; show(); } });
      scrub.addEventListener("input", function () { seekTo(parseFloat(scrub.value)); });
      giveFocusBack(scrub);
    }
    video.loop = loop ? loop.checked : true;
    if (loop) { loop.addEventListener("change", function () { video.loop = loop.checked; }); giveFocusBack(loop); }
    if (speed) {
      speed.addEventListener("change", function () { video.playbackRate = parseFloat(speed.value); });
      giveFocusBack(speed);
    }

    // Muted autoplay, if the person chose it.
    var auto = document.getElementById("pref-autoplay");
    if (auto) {
      auto.closest(".pref").hidden = false;
      auto.checked = prefs.get("autoplay", "off") === "on";
      auto.addEventListener("change", function () { prefs.set("autoplay", auto.checked ? "on" : "off"); });
      giveFocusBack(auto);
    }

    // The strip: each frame a button that shows it in the player.
    var strip = document.getElementById("strip");
    var tiles = [];
    function tileFrame(i, k, n) { return Math.floor(((2 * i + 1) * n) / (2 * k)); }
    function label() {
      var tm = timing(), d = video.duration;
      tiles.forEach(function (tile, i) {
        var text;
        if (tm) text = "frame " + (tileFrame(i, tiles.length, tm.frames) + 1);
        else if (isFinite(d)) text = (((2 * i + 1) / (2 * tiles.length)) * d).toFixed(2) + " s";
        else text = "";
        tile.label.textContent = text;
        tile.button.setAttribute("aria-label", "Show " + (text || "this frame"));
      });
      markTile();
    }
    function markTile() {
      var tm = timing();
      tiles.forEach(function (tile, i) {
        var at = !!tm && frameIndex(tm) === tileFrame(i, tiles.length, tm.frames);
        tile.button.classList.toggle("at", at);
      });
    }
    function pick(i) {
      var tm = timing();
      video.pause();
      if (tm) { goToFrame(tileFrame(i, tiles.length, tm.frames)); return; }
      var d = video.duration;
      if (isFinite(d)) {
        var t = ((2 * i + 1) / (2 * tiles.length)) * d + 0.001;
        queue(function () { return seekShown(t); });
      }
    }
    if (strip) {
      strip.addEventListener("error", function () { strip.classList.add("hidden"); }, true);
      tiles = cutStrip(strip, pick);
      label();
      video.addEventListener("loadedmetadata", label);
      strip.addEventListener("tandem:tiles", function (e) {
        tiles = e.detail; label();
      });
    }

    document.querySelectorAll("[data-action]").forEach(function (b) {
      b.addEventListener("click", function (e) {
        // Clicked with the mouse, the button gives the keys back (Enter then saves);
        // pressed from the keyboard it keeps the focus where the user put it.
        if (e.detail > 0) b.blur();
        var a = b.getAttribute("data-action");
        if (a === "play") toggle();
        if (a === "back") step(-1);
        if (a === "forward") step(1);
        if (a === "first") first();
        if (a === "last") lastFrame();
      });
    });
    function toggle() {
      if (video.paused) { var p = video.play(); if (p && p.catch) p.catch(function () {}); } else { video.pause(); }
    }
    // A click on the picture plays or pauses, as Space does.
    video.addEventListener("click", toggle);

    // The rate may come with the page or later; the numbers shown follow it.
    if (window.MutationObserver) {
      new MutationObserver(function () { show(); label(); })
        .observe(video, { attributes: true, attributeFilter: ["data-fps", "data-frames"] });
    }

    var api = {
      toggle: toggle,
      step: step,
      first: first,
      last: lastFrame,
      seekTo: seekTo,
      loop: function () { if (loop) { loop.checked = !loop.checked; video.loop = loop.checked; } },
      faster: function (dir) {
        if (!speed) return;
        var i = speed.selectedIndex + dir;
        if (i >= 0 && i < speed.options.length) {
          speed.selectedIndex = i;
          video.playbackRate = parseFloat(speed.value);
        }
      },
      // For tests and for the forms: how the player steps, and whether it is at rest.
      mode: function () { return timing() ? "rate" : (rvfc ? "presented" : "time"); },
      settled: function () { return pending === null && busy === 0 && quietNow() && pausedSeen === video.paused; },
      autoplay: function () {
        if (auto && auto.checked) { video.muted = true; toggle(); }
      }
    };
    show();
    return api;
  }

  // Cuts a strip image (k frames tiled `data-columns` to a row) into one tile per frame,
  // with gaps and a label under each. `pick(i)`, if given, makes the tiles buttons.
  function cutStrip(box, pick) {
    var img = box.querySelector("img");
    var k = parseInt(box.dataset.k, 10), cols = parseInt(box.dataset.columns, 10) || k;
    if (!img || !(k > 0)) return [];
    var made = [];
    function build() {
      var rows = Math.ceil(k / cols);
      var w = img.naturalWidth / cols, h = img.naturalHeight / rows;
      if (!(w > 0 && h > 0)) return;
      var list = document.createElement("ol");
      list.className = "tiles";
      list.style.gridTemplateColumns = "repeat(" + Math.min(k, cols === k ? k : cols) + ", minmax(0, 1fr))";
      list.setAttribute("aria-label", img.alt);
      for (var i = 0; i < k; i++) {
        var li = document.createElement("li");
        var tile = document.createElement(pick ? "button" : "div");
        tile.className = "tile";
        if (pick) { tile.type = "button"; tile.tabIndex = -1; }
        var crop = document.createElement("span");
        crop.className = "crop";
        crop.style.aspectRatio = w + " / " + h;
        var part = document.createElement("img");
        part.src = img.currentSrc || img.src;
        part.alt = "";
        part.style.width = (cols * 100) + "%";
        part.style.transform = "translate(" + (-100 * (i % cols) / cols) + "%, " + (-100 * Math.floor(i / cols) / rows) + "%)";
        crop.appendChild(part);
        tile.appendChild(crop);
        var lab = document.createElement("span");
        lab.className = "tile-label";
        if (box.dataset.numbered === "order") lab.textContent = String(i + 1);
        li.appendChild(tile);
        li.appendChild(lab);
        list.appendChild(li);
        if (pick) tile.addEventListener("click", (function (i, tile) {
          return function (e) { if (e.detail > 0) tile.blur(); pick(i); };
        })(i, tile));
        made.push({ button: tile, label: lab });
      }
      box.replaceChildren(list);
      box.dispatchEvent(new CustomEvent("tandem:tiles", { detail: made }));
    }
    if (img.complete && img.naturalWidth > 0) build();
    else img.addEventListener("load", build);
    return made;
  }

  // ---- Saying what is wrong, on the page ------------------------------------------
  function problem(text, at, final) {
    var p = document.getElementById("problem");
    document.querySelectorAll('[aria-invalid="true"]').forEach(function (el) { el.removeAttribute("aria-invalid"); });
    if (!p) return;
    if (!text) { p.hidden = true; p.textContent = ""; return; }
    p.textContent = text;
    p.hidden = false;
    p.classList.toggle("is-final", !!final);
    if (at) at.setAttribute("aria-invalid", "true");
  }

  // ---- The verdict form --------------------------------------------------------
  // Refused here before anything is sent (the server checks the same): no verdict, a
  // reject without a reason, a reason that needs a note (the protocol's `note = true`,
  // marked data-note) without one. The time spent counts only while
  // the page is visible, and is carried over a refused save with the video's position.
  // A calibration item's known flaw as a band over the scrub bar, once the clip's
  // duration is known (and again when the bar changes size).
  function markFlaw(video) {
    var flaw = document.getElementById("flaw");
    var scrub = document.getElementById("scrub");
    if (!video || !flaw || !flaw.dataset.from || !scrub) return;
    var band = document.createElement("div");
    band.className = "flaw-mark";
    band.title = "The known flaw";
    scrub.parentNode.appendChild(band);
    function place() {
      var d = video.duration;
      if (!(isFinite(d) && d > 0)) { band.hidden = true; return; }
      var a = Math.max(0, Math.min(1, parseFloat(flaw.dataset.from) / d));
      var b = Math.max(a, Math.min(1, parseFloat(flaw.dataset.to) / d));
      band.hidden = false;
      band.style.left = (scrub.offsetLeft + a * scrub.offsetWidth) + "px";
      band.style.width = Math.max(3, (b - a) * scrub.offsetWidth) + "px";
    }
    ["loadedmetadata", "durationchange"].forEach(function (ev) { video.addEventListener(ev, place); });
    window.addEventListener("resize", place);
    place();
  }

  // The time an item's page has been open and visible (the Page Visibility API), on top
  // of what the page was drawn with (`spent_before`: a refused save's, or the blind
  // answer's); `fill` writes it (`spent_ms`) and the video's position into the form.
  function pageTimer(form) {
    var spent = form.querySelector('input[name="spent_ms"]');
    var carried = form.querySelector('input[name="spent_before"]');
    var pos = form.querySelector('input[name="position"]');
    var before = carried ? (parseInt(carried.value, 10) || 0) : 0;
    var since = document.visibilityState === "visible" ? performance.now() : null;
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") { if (since === null) since = performance.now(); }
      else if (since !== null) { before += performance.now() - since; since = null; }
    });
    function now() { return before + (since !== null ? performance.now() - since : 0); }
    return {
      now: now,
      fill: function () {
        if (spent) spent.value = String(Math.round(now()));
        var video = document.getElementById("clip");
        if (pos && video) pos.value = video.currentTime.toFixed(3);
      }
    };
  }

  // The blind key check's answer is final, so the first Enter (or click) asks and the
  // second saves it; it is sent with the time spent on it and the video's position, so
  // that the verdict's page counts on from there and shows the same frame.
  function setupBlind() {
    var form = document.getElementById("blind-form");
    if (!form) return;
    form.noValidate = true;
    var timer = pageTimer(form);
    window.tandemSpentMs = timer.now;
    var confirm = document.getElementById("confirm-blind");
    var asked = null;
    form.addEventListener("change", function () {
      asked = null;
      if (confirm) confirm.hidden = true;
      var say = document.getElementById("choose-first");
      if (say) say.hidden = true;
    });
    form.addEventListener("submit", function (e) {
      var chosen = form.querySelector('input[name="chosen"]:checked');
      if (!chosen) {
        e.preventDefault();
        var say = document.getElementById("choose-first");
        if (say) say.hidden = false;
        return;
      }
      if (asked !== chosen.value) {
        e.preventDefault();
        asked = chosen.value;
        if (confirm) {
          confirm.textContent = "Save " + chosen.value + " as your answer? It cannot change after: Enter again saves it, another number changes it.";
          confirm.hidden = false;
        }
        return;
      }
      timer.fill();
    });
  }

  function setupVerdict(player) {
    var form = document.getElementById("verdict-form");
    if (!form) return;
    form.noValidate = true; // our own messages: the browser's bubble would move the focus
    var final = form.dataset.final === "1";
    var note = document.getElementById("note");
    var boxes = Array.prototype.slice.call(form.querySelectorAll('input[name="reasons"]'));
    var needNote = boxes.filter(function (b) { return b.dataset.note === "1"; });
    var valid = document.getElementById("v-valid");
    var reject = document.getElementById("v-reject");
    var reasons = document.getElementById("reasons");
    var shown = false;

    function check() {
      if (final) return ["Nothing was sent: a final verdict cannot change.", null, true];
      var v = form.querySelector('input[name="verdict"]:checked');
      if (!v) return ["Choose valid (V) or reject (R).", form.querySelector("fieldset.verdicts")];
      var ticked = boxes.filter(function (b) { return b.checked && !b.disabled; });
      if (v.value === "reject" && ticked.length === 0) {
        return ["A reject needs a reason: tick one with its number key (1–" + boxes.length + ").", reasons];
      }
      var wants = needNote.filter(function (b) { return b.checked && !b.disabled; })[0];
      if (wants && note && note.value.trim() === "") {
        return ["\u201c" + wants.dataset.label + "\u201d needs a note: press N and write what is wrong.", note];
      }
      return null;
    }
    form.addEventListener("change", function () {
      if (!shown) return;
      var c = check();
      if (c) problem(c[0], c[1]); else { problem(null); shown = false; }
    });

    if (valid) valid.addEventListener("change", function () {
      boxes.forEach(function (c) { c.checked = false; });
    });
    boxes.forEach(function (c) {
      c.addEventListener("change", function () { if (c.checked && reject) reject.checked = true; });
    });

    var timer = pageTimer(form);
    window.tandemSpentMs = timer.now;

    form.addEventListener("submit", function (e) {
      var c = check();
      if (c) {
        e.preventDefault();
        problem(c[0], c[1], c[2]);
        shown = true;
        return;
      }
      timer.fill();
    });

    // Back where the video was before a refused save (or the blind answer's save).
    var pos = form.querySelector('input[name="position"]');
    var at = pos ? parseFloat(pos.value) : NaN;
    var video = document.getElementById("clip");
    if (player && video && at > 0) {
      var go = function () { player.seekTo(at); };
      if (video.readyState >= 1) go(); else video.addEventListener("loadedmetadata", go, { once: true });
    } else if (player && !final) {
      player.autoplay();
    }
    if (document.getElementById("problem") && !document.getElementById("problem").hidden) shown = true;
  }

  // The author's resolution: a note is required, said on the page.
  function setupResolve() {
    var withdraw = document.getElementById("withdraw-form");
    if (withdraw) {
      withdraw.noValidate = true;
      withdraw.addEventListener("submit", function (e) {
        var note = document.getElementById("note");
        if (note && note.value.trim() === "") {
          e.preventDefault();
          problem("A withdrawal needs a note saying why: press N and write it.", note);
        }
      });
    }
    var form = document.getElementById("resolve-form");
    if (!form) return;
    form.noValidate = true;
    form.addEventListener("submit", function (e) {
      var v = form.querySelector('input[name="verdict"]:checked');
      var note = document.getElementById("note");
      if (!v) { e.preventDefault(); problem("Choose accept (A) or reject (R).", form.querySelector("fieldset")); return; }
      if (note && note.value.trim() === "") {
        e.preventDefault();
        problem("A resolution needs a note saying why: press N and write it.", note);
      }
    });
  }

  // ---- The study's answers ----------------------------------------------------------
  function setupStudy() {
    var form = document.getElementById("study-form") || document.getElementById("study-done");
    document.querySelectorAll(".study-clip .strip").forEach(function (s) { cutStrip(s, null); });
    var videos = Array.prototype.slice.call(document.querySelectorAll(".study-clip video"));
    var all = document.getElementById("play-all");
    if (all && videos.length) {
      all.hidden = false;
      all.addEventListener("click", playAll);
    }
    if (!form) return;
    var note = document.getElementById("ties");
    // Two clips with one rank on one question: both cells are marked.
    function marks() {
      var faults = [];
      form.querySelectorAll("tr[data-axis]").forEach(function (row) {
        var by = {};
        var sels = Array.prototype.slice.call(row.querySelectorAll("select"));
        sels.forEach(function (s) { if (s.value) (by[s.value] = by[s.value] || []).push(s); });
        sels.forEach(function (s) {
          var tie = !!(s.value && by[s.value].length > 1);
          s.classList.toggle("tie", tie);
          if (tie) s.setAttribute("aria-invalid", "true"); else s.removeAttribute("aria-invalid");
        });
        Object.keys(by).forEach(function (v) {
          if (by[v].length > 1) {
            var title = row.querySelector("th").firstChild.textContent.trim();
            faults.push(title + ": rank " + v + " is given to " + by[v].map(function (s) { return s.dataset.clip; }).join(" and "));
          }
        });
      });
      if (note && told) {
        note.hidden = faults.length === 0;
        note.textContent = faults.length ? faults.join("; ") + ": each rank once per question." : "";
      }
    }
    var told = !document.getElementById("problems");
    form.addEventListener("change", function () { told = true; marks(); });
    marks();
  }

  // Every clip of the set from its start, together.
  function playAll() {
    var videos = Array.prototype.slice.call(document.querySelectorAll(".study-clip video"));
    if (!videos.length) return;
    if (videos.some(function (v) { return !v.paused; })) {
      videos.forEach(function (v) { v.pause(); });
      return;
    }
    var ready = videos.map(function (v) {
      return new Promise(function (r) {
        v.pause();
        if (v.currentTime === 0 && !v.seeking) { r(); return; }
        v.addEventListener("seeked", function () { r(); }, { once: true });
        v.currentTime = 0;
      });
    });
    Promise.all(ready).then(function () {
      videos.forEach(function (v) { var p = v.play(); if (p && p.catch) p.catch(function () {}); });
    });
  }

  function submit(formId) {
    var f = document.getElementById(formId);
    if (!f) return false;
    if (typeof f.requestSubmit === "function") { f.requestSubmit(); } else { f.submit(); }
    return true;
  }

  function check(id) {
    var el = document.getElementById(id);
    if (el && !el.disabled) { el.checked = true; el.dispatchEvent(new Event("change", { bubbles: true })); return true; }
    return false;
  }

  // ---- Keys --------------------------------------------------------------------
  function onKey(e) {
    if (e.altKey || e.metaKey || e.isComposing) return;
    var t = e.target;
    var single = e.key.length === 1; // a character key (WCAG 2.1.4): these can be turned off
    if (e.key === "Escape") {
      // Esc leaves any field or control, so that the shortcuts work again.
      if (t && t !== document.body && typeof t.blur === "function" && t.tagName !== "A") {
        t.blur();
        e.preventDefault();
      }
      return;
    }
    if (typing(t)) {
      var studyForm = t.form && t.form.id === "study-form";
      if (studyForm && (e.key === "p" || e.key === "P") && !e.ctrlKey && shortcutsOn()) {
        playAll();
        e.preventDefault();
        return;
      }
      // Enter in a note saves the form (Shift+Enter is a new line), as Ctrl+Enter does
      // in any field.
      var inNote = t.id === "note" && !e.shiftKey;
      if (e.key === "Enter" && (e.ctrlKey || studyForm || inNote) && t.form) {
        if (typeof t.form.requestSubmit === "function") t.form.requestSubmit(); else t.form.submit();
        e.preventDefault();
      }
      return;
    }
    if (e.ctrlKey) return;
    // Enter in a list's filter applies the filter (never opens an item).
    if (e.key === "Enter" && t && t.form && t.form.classList.contains("filters")) {
      if (typeof t.form.requestSubmit === "function") t.form.requestSubmit(); else t.form.submit();
      e.preventDefault();
      return;
    }
    if (single && !shortcutsOn()) return;
    var tag = t && t.tagName;
    // A focused button, link, box or option keeps Space and Enter for itself.
    if ((e.key === " " || e.key === "Enter") && (tag === "BUTTON" || tag === "A" || tag === "SUMMARY" ||
        (tag === "INPUT" && ["checkbox", "radio", "submit", "button"].includes(t.type)))) {
      if (e.key === " " || tag !== "INPUT") return;
    }
    // The baseline's question, and a question answered before its key is shown (the
    // blind key check): a number picks an answer (on the baseline also its letter; on a
    // blind question the letters keep their commands: B is back, not option B), Enter
    // saves, Space plays or pauses.
    var bform = document.getElementById("baseline-form") || document.getElementById("blind-form");
    if (bform) {
      var radios = bform.querySelectorAll('input[name="chosen"]');
      var pick = null;
      if (single && /^[a-zA-Z]$/.test(e.key) && bform.id === "baseline-form") pick = bform.querySelector('input[name="chosen"][value="' + e.key.toUpperCase() + '"]');
      else if (/^[1-9]$/.test(e.key)) pick = radios[Number(e.key) - 1] || null;
      if (pick) {
        pick.checked = true;
        pick.dispatchEvent(new Event("change", { bubbles: true }));
        pick.focus();
        e.preventDefault();
        return;
      }
      if (e.key === "Enter") {
        if (bform.querySelector('input[name="chosen"]:checked')) {
          if (typeof bform.requestSubmit === "function") bform.requestSubmit(); else bform.submit();
        } else {
          var say = document.getElementById("choose-first");
          if (say) say.hidden = false;
        }
        e.preventDefault();
        return;
      }
      var v = document.querySelector(".baseline-clip video");
      if (e.key === " " && v) {
        if (v.paused) v.play(); else v.pause();
        e.preventDefault();
        return;
      }
    }
    var p = window.tandemPlayer;
    var handled = true;
    // On a final item the verdict's controls do not move: the keys that would change
    // them say why instead (once; the message stays).
    var vform = document.getElementById("verdict-form");
    if (vform && vform.dataset.final === "1" && !e.ctrlKey &&
        (/^[vVrR1-9]$/.test(e.key))) {
      var already = document.getElementById("problem");
      if (!already || already.hidden) {
        problem("This verdict is final: both validators have decided, so it can no longer change.", null, true);
      }
      e.preventDefault();
      return;
    }
    switch (e.key) {
      case " ": if (p) p.toggle(); else if (document.getElementById("play-all")) playAll(); else handled = false; break;
      case "ArrowLeft": if (p) p.step(e.shiftKey ? -10 : -1); else handled = false; break;
      case "ArrowRight": if (p) p.step(e.shiftKey ? 10 : 1); else handled = false; break;
      case "Home": if (p) p.first(); else handled = false; break;
      case "End": if (p) p.last(); else handled = false; break;
      case "[": if (p) p.faster(-1); else handled = false; break;
      case "]": if (p) p.faster(1); else handled = false; break;
      case "l": case "L": if (p) p.loop(); else handled = false; break;
      case "p": case "P": if (document.getElementById("play-all")) playAll(); else handled = false; break;
      // Back to the item before (its verdict shown, changeable while the partner has
      // not decided) and forward again, as the browser's history has them.
      case "g": case "G": {
        // A calibration item's known flaw, once its verdict is shown: its first frame.
        var flaw = document.getElementById("flaw");
        var clip = document.getElementById("clip");
        if (p && flaw && flaw.dataset.from && clip) { clip.pause(); p.seekTo(parseFloat(flaw.dataset.from)); }
        else handled = false;
        break;
      }
      case "b": case "B": {
        // On an item, the browser's history; elsewhere (the queue, after the last item)
        // the item just saved, while its verdict can change.
        var saved = document.getElementById("change-saved");
        if (document.getElementById("verdict-form") || document.getElementById("blind-form")) history.back();
        else if (saved) window.location.href = saved.href;
        else handled = false;
        break;
      }
      case "f": case "F": if (document.getElementById("verdict-form") || document.getElementById("blind-form")) history.forward(); else handled = false; break;
      case "v": case "V": handled = check("v-valid"); break;
      case "r": case "R": handled = check("v-reject") || check("r-reject"); break;
      case "a": case "A": handled = check("r-accept"); break;
      case "n": case "N": {
        var note = document.getElementById("note");
        if (note && !note.disabled) note.focus(); else handled = false;
        break;
      }
      case "q": case "Q": {
        var back = document.getElementById("to-queue") || document.querySelector(".progress.slim a, p.meta a");
        if (back) window.location.href = back.href; else handled = false;
        break;
      }
      case "Enter": {
        handled = submit("verdict-form") || submit("resolve-form") || submit("study-form");
        if (!handled) {
          var start = document.getElementById("start");
          if (start) { window.location.href = start.href; handled = true; }
        }
        break;
      }
      default: {
        if (/^[1-9]$/.test(e.key)) {
          var box = document.querySelector('input[name="reasons"][data-key="' + e.key + '"]');
          var go = document.querySelector('a[data-goto="' + e.key + '"]');
          if (box && box.disabled) {
            var form = document.getElementById("verdict-form");
            if (form && form.dataset.final !== "1") problem("\u201c" + box.dataset.label + "\u201d applies to " + box.dataset.only + " questions only.", null);
          } else if (box) {
            box.checked = !box.checked;
            box.dispatchEvent(new Event("change", { bubbles: true }));
          } else if (go) {
            window.location.href = go.href;
          } else handled = false;
        } else handled = false;
      }
    }
    if (handled) e.preventDefault();
  }
  // In the capture phase, so that a focused control cannot keep Esc to itself.
  document.addEventListener("keydown", onKey, true);

  document.addEventListener("DOMContentLoaded", function () {
    var keys = document.getElementById("pref-keys");
    if (keys) {
      keys.closest(".pref").hidden = false;
      keys.checked = shortcutsOn();
      keys.addEventListener("change", function () { prefs.set("shortcuts", keys.checked ? "on" : "off"); });
      giveFocusBack(keys);
    }
    // A list's filter menus apply on change.
    document.querySelectorAll("form.filters select").forEach(function (sel) {
      sel.addEventListener("change", function () {
        if (typeof sel.form.requestSubmit === "function") sel.form.requestSubmit(); else sel.form.submit();
      });
    });
    var video = document.getElementById("clip");
    var player = video ? makePlayer(video) : null;
    window.tandemPlayer = player;
    markFlaw(video);
    setupVerdict(player);
    setupBlind();
    setupResolve();
    setupStudy();
  });
})();
