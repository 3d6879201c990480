// dbexp.book.check's harness: loads each page of the settings (the JSON in <script id="dbexp-settings">)
// into a frame of the book's reading size in turn, waits for its charts to draw (vega's marks) and its
// layout to settle, and reads it: the marks drawn, Altair's error boxes, the tables (dbexpTables, in
// check-tables.js) and the page's height at that width. What it saw so far goes into the pre element
// dbexp-seen after each page, everything into a pre element dbexp-check at the end (check.py reads both
// from the dumped DOM: neither tag may be written out in this file).
const settings=JSON.parse(document.getElementById('dbexp-settings').textContent);
const pages=settings.pages, seen=[], frame=document.getElementById('f');
frame.style.width=settings.width+'px'; frame.style.height=settings.height+'px';
const sleep=ms=>new Promise(r=>setTimeout(r,ms));
const marks=d=>d.querySelectorAll('canvas.marks, svg.marks').length;
async function read(p){
  await new Promise(r=>{frame.onload=r; frame.src=p.url;});
  const d=frame.contentDocument;
  if(!d) return {page:p.url, drawn:0, errors:['the page could not be read (no document)'], tables:[], height:0};
  if(d.fonts) await d.fonts.ready;
  for(let t=0; marks(d)<p.expected && t<settings.wait; t+=50) await sleep(50);
  await sleep(settings.settle);
  return {page:p.url, drawn:marks(d), tables:dbexpTables(d),
          errors:[...d.querySelectorAll('div.error')].map(e=>e.textContent.trim()),
          height:Math.max(d.documentElement.scrollHeight, d.body?d.body.scrollHeight:0)};
}
(async()=>{
  for(const p of pages){
    seen.push(await read(p));
    document.getElementById('dbexp-seen').textContent=JSON.stringify(seen.map(s=>s.page));
  }
  const pre=document.createElement('pre'); pre.id='dbexp-check'; pre.textContent=JSON.stringify(seen);
  document.body.appendChild(pre);
})();
