// Tandem's pages: the player controls and the keyboard. No framework, no build step.
"use strict";

(function () {
  function typing(target) {
    if (!target) return false;
    var tag = target.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" ||
      (tag === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(target.type));
  }

  // ---- The player -------------------------------------------------------------
  var video = document.getElementById("clip");
  var frame = 1 / 24; // refined from the frames the browser actually presents
  function setupPlayer() {
    if (!video) return;
    var playBtn = document.querySelector('[data-action="play"]');
    var loop = document.getElementById("loop");
    var speed = document.getElementById("speed");
    var clock = document.getElementById("clock");
    var strip = document.getElementById("strip");
    if (strip) strip.addEventListener("error", function () { strip.classList.add("hidden"); });

    if ("requestVideoFrameCallback" in HTMLVideoElement.prototype) {
      var last = null;
      var onFrame = function (_now, meta) {
        if (last !== null) {
          var d = meta.mediaTime - last;
          if (d > 0.004 && d < 0.2) frame = d;
        }
        last = meta.mediaTime;
        video.requestVideoFrameCallback(onFrame);
      };
      video.requestVideoFrameCallback(onFrame);
    }
    function show() {
      if (clock) clock.textContent = video.currentTime.toFixed(2) + " s";
      if (playBtn) playBtn.firstChild.textContent = video.paused ? "Play " : "Pause ";
    }
    video.addEventListener("timeupdate", show);
    video.addEventListener("play", show);
    video.addEventListener("pause", show);
    video.addEventListener("seeked", show);
    video.loop = loop ? loop.checked : true;
    if (loop) loop.addEventListener("change", function () { video.loop = loop.checked; });
    if (speed) speed.addEventListener("change", function () { video.playbackRate = parseFloat(speed.value); });

    window.tandemPlayer = {
      toggle: function () { if (video.paused) { video.play(); } else { video.pause(); } },
      step: function (n) {
        video.pause();
        var t = video.currentTime + n * frame;
        video.currentTime = Math.min(Math.max(t, 0), video.duration || t);
      },
      loop: function () { if (loop) { loop.checked = !loop.checked; video.loop = loop.checked; } },
      faster: function (dir) {
        if (!speed) return;
        var i = speed.selectedIndex + dir;
        if (i >= 0 && i < speed.options.length) {
          speed.selectedIndex = i;
          video.playbackRate = parseFloat(speed.value);
        }
      }
    };
    document.querySelectorAll("[data-action]").forEach(function (b) {
      b.addEventListener("click", function () {
        var a = b.getAttribute("data-action");
        if (a === "play") window.tandemPlayer.toggle();
        if (a === "back") window.tandemPlayer.step(-1);
        if (a === "forward") window.tandemPlayer.step(1);
      });
    });
  }

  // ---- Forms: the note is required with "other" --------------------------------
  function setupForms() {
    var form = document.getElementById("verdict-form");
    if (!form) return;
    var note = document.getElementById("note");
    var other = form.querySelector('input[name="reasons"][value="other"]');
    function sync() { if (note && other) note.required = other.checked; }
    if (other) other.addEventListener("change", sync);
    sync();
    // A valid verdict takes no reasons: untick them when "valid" is chosen.
    var valid = document.getElementById("v-valid");
    if (valid) valid.addEventListener("change", function () {
      form.querySelectorAll('input[name="reasons"]').forEach(function (c) { c.checked = false; });
      sync();
    });
    form.querySelectorAll('input[name="reasons"]').forEach(function (c) {
      c.addEventListener("change", function () {
        var reject = document.getElementById("v-reject");
        if (c.checked && reject) reject.checked = true;
      });
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
    if (el && !el.disabled) { el.checked = true; el.dispatchEvent(new Event("change")); return true; }
    return false;
  }

  // ---- Keys --------------------------------------------------------------------
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.metaKey) return;
    var t = e.target;
    if (typing(t)) {
      if (e.key === "Escape") { t.blur(); e.preventDefault(); }
      var studyForm = t.form && t.form.id === "study-form";
      if (e.key === "Enter" && (e.ctrlKey || studyForm) && t.form) {
        if (typeof t.form.requestSubmit === "function") t.form.requestSubmit(); else t.form.submit();
        e.preventDefault();
      }
      return;
    }
    if (e.ctrlKey) return;
    var p = window.tandemPlayer;
    var handled = true;
    switch (e.key) {
      case " ": if (p) p.toggle(); else handled = false; break;
      case "ArrowLeft": if (p) p.step(-1); else handled = false; break;
      case "ArrowRight": if (p) p.step(1); else handled = false; break;
      case "[": if (p) p.faster(-1); else handled = false; break;
      case "]": if (p) p.faster(1); else handled = false; break;
      case "l": case "L": if (p) p.loop(); else handled = false; break;
      case "v": case "V": handled = check("v-valid"); break;
      case "r": case "R": handled = check("v-reject") || check("r-reject"); break;
      case "a": case "A": handled = check("r-accept"); break;
      case "n": case "N": {
        var note = document.getElementById("note");
        if (note && !note.disabled) note.focus(); else handled = false;
        break;
      }
      case "q": case "Q": {
        var back = document.querySelector(".progress.slim a, p.meta a");
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
          if (box && !box.disabled) {
            box.checked = !box.checked;
            box.dispatchEvent(new Event("change"));
          } else if (go) {
            window.location.href = go.href;
          } else handled = false;
        } else handled = false;
      }
    }
    if (handled) e.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    video = document.getElementById("clip");
    setupPlayer();
    setupForms();
  });
})();
