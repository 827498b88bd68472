/* Document viewer, PDFs: pdf.js (pdfjs-dist, served from our static files) renders the page (?page=N) on a canvas
   with its text layer on top (selectable, found by the browser's search), and marks the cited passage
   (?chunk=<id>, the <mark> of the text view beside it) in that text layer. */
const box = document.getElementById("pdf-page");
const status = document.getElementById("pdf-status");

function dirOf(url) { return url.slice(0, url.lastIndexOf("/") + 1); }

// Letters and digits only, lower-cased: the PDF's text layer and the stored passage differ in spacing, hyphenation
// at line ends, ligatures and the glyph runs cut from passages; their letters agree.
function letters(text) {
  return text.normalize("NFKD").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

/* The spans of the text layer that hold `passage`: windows of the passage are looked up in order in the page's
   letters; the spans from the first window found to the end of the last are the passage (a passage running onto
   the next page ends where this page's text does). */
function passageSpans(layer, passage) {
  const spans = [...layer.querySelectorAll("span")].filter((s) => !s.classList.contains("markedContent") && s.textContent);
  let page = "";
  const owner = [];
  spans.forEach((span, i) => {
    const part = letters(span.textContent);
    page += part;
    for (let k = 0; k < part.length; k++) owner.push(i);
  });
  const wanted = letters(passage);
  const size = Math.min(30, wanted.length);
  if (!size) return [];
  let first = -1, last = -1, from = 0;
  for (let at = 0; at + size <= wanted.length; at += 15) {
    const found = page.indexOf(wanted.slice(at, at + size), from);
    if (found < 0) continue;
    if (first < 0) first = Math.max(0, found - at);
    last = found + size;
    from = found + 1;
  }
  if (first < 0) return [];
  const picked = new Set(owner.slice(first, last));
  return spans.filter((_, i) => picked.has(i));
}

async function render() {
  const pdfjs = await import(box.dataset.pdfjs);
  pdfjs.GlobalWorkerOptions.workerSrc = box.dataset.worker;
  const pdf = await pdfjs.getDocument({
    url: box.dataset.file,
    standardFontDataUrl: dirOf(box.dataset.fonts),
    cMapUrl: dirOf(box.dataset.cmaps),
    isEvalSupported: false, // the CSP refuses eval; pdf.js draws fonts without it
    useWasm: false, // image decoders in JavaScript: the CSP allows no WebAssembly
  }).promise;
  const number = Math.min(Math.max(parseInt(box.dataset.page, 10) || 1, 1), pdf.numPages);
  const page = await pdf.getPage(number);
  const natural = page.getViewport({ scale: 1 });
  const width = box.parentElement.clientWidth || natural.width;
  const viewport = page.getViewport({ scale: Math.min(width / natural.width, 2) });
  const ratio = window.devicePixelRatio || 1;
  const canvas = document.getElementById("pdf-canvas");
  canvas.width = Math.floor(viewport.width * ratio);
  canvas.height = Math.floor(viewport.height * ratio);
  canvas.style.width = `${Math.floor(viewport.width)}px`;
  canvas.style.height = `${Math.floor(viewport.height)}px`;
  box.style.setProperty("--scale-factor", String(viewport.scale));
  box.style.width = canvas.style.width;
  box.style.height = canvas.style.height;
  await page.render({
    canvas,
    canvasContext: canvas.getContext("2d"),
    viewport,
    transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : null,
  }).promise;
  const layer = document.getElementById("pdf-text");
  const text = new pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container: layer, viewport });
  await text.render();
  box.dataset.rendered = String(number);

  const cited = document.querySelector(".chunk.cited");
  if (!cited) {
    status.textContent = `Page ${number} of ${pdf.numPages}.`;
    return;
  }
  const marked = passageSpans(layer, cited.textContent);
  marked.forEach((span) => span.classList.add("highlight", "pdf-cited"));
  if (marked.length) {
    status.textContent = `Page ${number} of ${pdf.numPages}; the cited passage is highlighted.`;
    if (!window.matchMedia("(min-width: 1000px)").matches) marked[0].scrollIntoView({ block: "center" });
  } else {
    status.textContent = `Page ${number} of ${pdf.numPages}; the cited passage is marked in the text.`;
  }
}

if (box) {
  render().catch((error) => {
    status.textContent = "The PDF page could not be drawn here; its text is shown instead.";
    box.dataset.rendered = "failed";
    console.warn("pdf.js:", error && error.message);
  });
}
