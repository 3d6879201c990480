// dbexp.book.check: reads one loaded page (its document) and returns, for each table of the chapters
// (``dbexp-table``, the labelled blocks apart), a line when it is wider than its column, so that it scrolls,
// or when it breaks a number across two lines of a cell.
function dbexpTables(doc){
  const out=[];
  doc.querySelectorAll('table.dbexp-table:not(.dbexp-blocks)').forEach((t,i)=>{
    let h=t.closest('section'); h=h?h.querySelector('h1,h2,h3'):null;
    const heads=[...t.querySelectorAll('thead th')].slice(0,3).map(x=>x.textContent.trim()).join(', ');
    const where=(h?h.textContent.replace('#','').trim():'table '+(i+1)).slice(0,60)+' (columns '+heads+', ...)';
    const box=t.parentElement;
    if(box.scrollWidth>box.clientWidth+1) out.push(where+': '+box.scrollWidth+' px wide in a column of '+box.clientWidth);
    const broken=[];
    t.querySelectorAll('td').forEach(td=>{
      const w=doc.createTreeWalker(td,NodeFilter.SHOW_TEXT); let n;
      while((n=w.nextNode())){
        for(const m of n.textContent.matchAll(/(?<![\w.,])(?:[+\u2212-](?=\d))?\d[\d,.]*%?/g)){
          const r=doc.createRange(); r.setStart(n,m.index); r.setEnd(n,m.index+m[0].length);
          const tops=new Set([...r.getClientRects()].map(x=>Math.round(x.top)));
          if(tops.size>1) broken.push(m[0]);
        }
      }
    });
    if(broken.length) out.push(where+': numbers broken across lines ('+broken.slice(0,3).join(', ')+')');
  });
  return out;
}
