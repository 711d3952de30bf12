import http from 'node:http';
const anon = () => (process.memoryUsage().rss/2**20).toFixed(1);
const srv = http.createServer((q,s)=>s.end('x')).listen(0);
await new Promise(r=>srv.once('listening',r));
const port = srv.address().port;
const mode = process.argv[2];
const { Pool, request } = await import('undici');
await new Promise(r=>setTimeout(r,500)); global.gc(); 
console.log('after import', anon());
if (mode==='undici') { const p = new Pool(`http://127.0.0.1:${port}`); const r = await p.request({path:'/',method:'GET'}); await r.body.text(); }
if (mode==='http') { await new Promise(res=>http.get(`http://127.0.0.1:${port}/`, r=>{r.resume(); r.on('end',res)})); }
await new Promise(r=>setTimeout(r,1500)); global.gc();
console.log(mode, 'after request', anon(), process.memoryUsage().heapUsed/2**20|0, 'ext', (process.memoryUsage().external/2**20).toFixed(1), 'ab', (process.memoryUsage().arrayBuffers/2**20).toFixed(1));
process.exit(0);
