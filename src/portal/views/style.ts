/** The portal's stylesheet, added to the sign-in pages' (wider, with tables and forms). */
export const PORTAL_STYLE = `
main{max-width:64rem}
h2{font-size:1.2rem;margin:2rem 0 .6rem;border-top:1px solid #d6dae3;padding-top:1.2rem}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;vertical-align:top;padding:.45rem .5rem;border-bottom:1px solid #e3e6ec}
td code,p code,th code{font-size:.85rem;word-break:break-all}
td form{margin:0}td button,.inline button{margin-top:0;padding:.35rem .8rem;font-size:.9rem}
.actions a{display:inline-block;margin:0 .6rem .3rem 0}
select,textarea{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #8a93a6;border-radius:4px;font-size:1rem;background:#fff;font-family:inherit}
select:focus,textarea:focus,a:focus,input[type=checkbox]:focus,input[type=radio]:focus,fieldset:focus,div:focus{outline:3px solid #2f6fde;outline-offset:2px}
fieldset{border:1px solid #d6dae3;border-radius:6px;margin:1rem 0;padding:.6rem 1rem 1rem}
legend,.group-label{font-weight:600;padding:0 .3rem;margin:.8rem 0 .3rem}
.check{display:flex;align-items:baseline;gap:.5rem;margin:.4rem 0}
.check input{width:auto;margin:0}.check label{display:inline;font-weight:400;margin:0}
.hint{color:#5b6478;margin:.2rem 0 .4rem;font-size:.92rem}
.warning{background:#fff4e0;color:#5c3b00;padding:.6rem;border-radius:4px}
.field-error{color:#a4161a;font-weight:600;margin:.2rem 0}
[aria-invalid=true]{border-color:#a4161a;border-width:2px}
.notice{color:#0f5132;background:#e3f4ea;padding:.6rem;border-radius:4px}
.permission{background:#fff4e0;color:#5c3b00;padding:.8rem;border-radius:4px}
.header{display:flex;justify-content:space-between;align-items:center;gap:1rem;flex-wrap:wrap}
.secret{font-family:ui-monospace,Menlo,Consolas,monospace}
a.button{display:inline-block;margin-top:1.2rem;margin-right:.6rem;padding:.6rem 1.2rem;border-radius:4px;border:1px solid #1f4fa8;text-decoration:none}
a.button.primary{background:#1f5fcf;color:#fff}a.button.secondary{background:#fff;color:#1f4fa8}
button{margin-right:.6rem}
th .muted{font-weight:400}
/* The form's default button (Enter in a field submits the form, not "add another URI"): first in the form, out of sight and of the tab order. */
.default-submit{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);border:0}
.product-name{font-weight:600;color:#5b6478;margin:0 0 .3rem;letter-spacing:.02em}
.danger{background:#a4161a;color:#fff;border-color:#7a1014}
.filter{display:flex;gap:.6rem;align-items:end;flex-wrap:wrap}.filter select,.filter input{width:auto}.filter label{margin:0}.filter button{margin-top:0}.filter .hint,.filter .error{flex-basis:100%}.filter .field-error{max-width:16rem}
ul.details{margin:0;padding-left:1rem}
ul.nav{list-style:none;display:flex;gap:1.2rem;padding:0;margin:.2rem 0 1rem}
.qr-box{max-width:14rem}.qr-box svg{width:100%;height:auto;display:block}
ol.codes{columns:2;font-size:1.05rem;padding-left:1.6rem}ol.codes li{margin:.3rem 0}
.actions form.inline{display:inline-block;margin-right:.6rem}
@media (max-width:40rem){main{margin:0;border-radius:0;padding:1rem}table,thead,tbody,tr,th,td{display:block}thead{position:absolute;left:-9999px}tr{border-bottom:1px solid #d6dae3;padding:.4rem 0}th,td{border:0;padding:.2rem 0}}
`;
