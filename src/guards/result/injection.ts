import { resolveOverlaps, scanOf, type Hit } from './text.js';
import type { TextGuard, TextScan } from './types.js';

export type InjectionAction = 'flag' | 'refuse';

/**
 * Instruction-like text aimed at the model, and role or tool-call markup. Heuristics, not a
 * classifier: phrases that ordinary tool results (pages, tickets, logs, code) almost never hold.
 * Gaps between words are bounded runs of words (`(?:\w+\s+){0,4}`: each repetition ends at a
 * space, so it splits one way), never `.*`: every pattern is linear in the text. Flag or refuse
 * only: rewriting the text would not make it safe.
 */
const W = String.raw`(?:[\w'’-]{1,20}[ \t]{1,3}){0,4}`; // up to four words
const EN: readonly RegExp[] = [
  // ignore / disregard / forget … previous instructions (the qualifier is checked below)
  new RegExp(String.raw`\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon)[ \t]{1,3}${W}(?:instructions?|prompts?|directions?|directives?|rules|guidelines|guardrails|commands?|context|messages?|conversation|constraints|policies|restrictions|programming|training)\b`, 'gi'),
  /\b(?:do not|don't|never)[ \t]{1,3}(?:follow|obey|listen to)[ \t]{1,3}(?:the[ \t]{1,3}|your[ \t]{1,3}|any[ \t]{1,3})?(?:previous|prior|original|system|above|earlier)\b/gi,
  /\byou[ \t]{1,3}are[ \t]{1,3}now[ \t]{1,3}(?:a|an|the|my|DAN|in[ \t]{1,3}(?:developer|god|DAN|jailbreak|unrestricted)[ \t]{1,3}mode|no[ \t]{1,3}longer|free|unrestricted|jailbroken|going[ \t]{1,3}to|acting[ \t]{1,3}as)\b/gi,
  /\bfrom[ \t]{1,3}now[ \t]{1,3}on,?[ \t]{1,3}you[ \t]{1,3}(?:are|will|must|shall|should|have)\b/gi,
  /\b(?:new|updated|revised|real|actual|true)[ \t]{1,3}(?:system[ \t]{1,3})?instructions?[ \t]{0,3}[:：]/gi,
  /\b(?:pretend|imagine)[ \t]{1,3}(?:that[ \t]{1,3})?you[ \t]{1,3}(?:are|have|were)[ \t]{1,3}(?:a|an|no|not|DAN|unrestricted|free)\b/gi,
  /\b(?:act|behave|respond)[ \t]{1,3}as[ \t]{1,3}(?:if[ \t]{1,3}you[ \t]{1,3}(?:are|were)[ \t]{1,3})?(?:an?[ \t]{1,3})?(?:unrestricted|unfiltered|jailbroken|evil|DAN)\b/gi,
  /\b(?:reveal|print|show|output|repeat|leak|tell[ \t]{1,3}me)[ \t]{1,3}(?:me[ \t]{1,3})?(?:your|the)[ \t]{1,3}(?:full[ \t]{1,3}|entire[ \t]{1,3}|initial[ \t]{1,3}|original[ \t]{1,3}|hidden[ \t]{1,3}|secret[ \t]{1,3})?(?:system[ \t]{1,3}prompt|prompt|instructions|initial[ \t]{1,3}prompt)\b/gi,
  /\brepeat[ \t]{1,3}(?:the[ \t]{1,3})?(?:words|text|everything)[ \t]{1,3}above\b/gi,
  /\b(?:do[ \t]{1,3}not|don't|never)[ \t]{1,3}(?:tell|inform|mention[ \t]{1,3}(?:this[ \t]{1,3})?to|alert|notify)[ \t]{1,3}the[ \t]{1,3}user\b/gi,
  /\bwithout[ \t]{1,3}(?:telling|informing|asking|notifying|alerting)[ \t]{1,3}the[ \t]{1,3}user\b/gi,
  /\b(?:if[ \t]{1,3}you[ \t]{1,3}are|attention|note[ \t]{1,3}to|dear|hey|hello)[ \t]{1,3}(?:an?[ \t]{1,3}|the[ \t]{1,3}|[\w’'-]{1,30}['’]s[ \t]{1,3})?(?:digital[ \t]{1,3}|virtual[ \t]{1,3}|personal[ \t]{1,3})?(?:AI|LLM|language[ \t]{1,3}model|AI[ \t]{1,3}assistant|assistant|chatbot|AI[ \t]{1,3}agent|GPT|ChatGPT|Claude|Copilot|Bing)\b[ \t]{0,3}(?:[,:;!.]|reading|processing|that|who)/gi,
  /\b(?:send|forward|email|post|upload|exfiltrate|transmit|leak)[ \t]{1,3}(?:the[ \t]{1,3}|this[ \t]{1,3}|all[ \t]{1,3}(?:the[ \t]{1,3})?|your[ \t]{1,3}|our[ \t]{1,3})?(?:conversation|chat[ \t]{1,3}history|chat|previous[ \t]{1,3}messages|user'?s?[ \t]{1,3}(?:data|messages|password|credentials|files|emails)|credentials|passwords?|api[ \t]{1,3}keys?|secrets|system[ \t]{1,3}prompt)[ \t]{1,3}to\b/gi,
  /\bnew[ \t]{1,3}instructions?[ \t]{1,3}(?:to|for)[ \t]{1,3}(?:the[ \t]{1,3})?(?:chat[ \t]{1,3})?(?:assistant|AI|model|agent|bot|LLM)\b/gi,
  /\bobey[ \t]{1,3}(?:this|these|my|the[ \t]{1,3}following)[ \t]{1,3}(?:instructions?|commands?|orders?)\b/gi,
  /\[(?:system|admin|developer)[ \t_]{0,3}(?:annotation|note|message|override|instruction|prompt)s?\b/gi,
  /\b(?:developer|DAN|jailbreak|god)[ \t]{1,3}mode[ \t]{1,3}(?:enabled|activated|on)\b/gi,
  /\b(?:stop|cease)[ \t]{1,3}(?:what[ \t]{1,3}you[ \t]{1,3}are[ \t]{1,3}doing|your[ \t]{1,3}current[ \t]{1,3}task|summariz(?:ing|ation))\b/gi,
  /\binstead,?[ \t]{1,3}(?:you[ \t]{1,3}(?:must|should|will)[ \t]{1,3})?(?:call|use|invoke|run|execute)[ \t]{1,3}(?:the[ \t]{1,3})?[\w.-]{1,64}[ \t]{1,3}(?:tool|function)\b/gi,
  /\b(?:call|invoke|use|run|execute)[ \t]{1,3}the[ \t]{1,3}[\w.-]{1,64}[ \t]{1,3}(?:tool|function)[ \t]{1,3}(?:now|immediately|right[ \t]{1,3}away|with[ \t]{1,3}the[ \t]{1,3}(?:argument|parameter)s?)\b/gi,
  /\b(?:assistant|AI|model|agent)[ \t]{1,3}(?:must|should)[ \t]{1,3}(?:now[ \t]{1,3})?(?:ignore|disregard|reveal|forward)\b/gi,
];
/** The qualifier that makes "ignore … instructions" aimed at the model, not a manual's "ignore the warning". */
const QUALIFIER = /\b(?:previous|prior|above|earlier|preceding|former|initial|original|all|any|every|system|developer|your|these|those|my|safety|ethical|existing|other)\b/i;

const ZH_QUALIFIER = /之前|以前|先前|此前|上面|上述|以上|前面|前述|所有|全部|一切|你的|原来|原有|原始|系统|任何/;
const ZH: readonly RegExp[] = [
  // verb … target within a clause; the qualifier (之前, 所有 …) is checked in the match (one gap, not two).
  /(?:忽略|无视|忽视|不要理会|不要管|别管|忘记|忘掉|抛开|放弃|跳过)[^。！？，,；\n]{0,16}?(?:指令|指示|提示|命令|规则|要求|设定|限制|约束|对话)/g,
  /你现在(?:扮演|(?:是|作为|成为|变成)(?:一个|一名|一位|一款|我的|DAN|AI|管理员|开发者|不受|没有|无限制|邪恶|黑客|越狱))/g,
  /从现在(?:开始|起)[，,\s]{0,2}你(?:是|将|要|必须|需要|应该|只能)/g,
  /(?:假装|假设|想象)你(?:是|现在是|没有)/g,
  /你(?:要|将|必须|需要)?(?:扮演|充当)(?:一个|一名|一位)?/g,
  /(?:新的|真正的|最新的|更新的)(?:系统)?(?:指令|指示|提示)[:：]/g,
  /(?:泄露|透露|显示|输出|打印|告诉我|重复)(?:一下)?(?:你的|你的全部|全部的|完整的)?(?:系统提示|系统提示词|提示词|初始指令|系统指令|隐藏指令)/g,
  /(?:不要|别|切勿|不得)(?:告诉|通知|提醒|让)用户/g,
  /(?:开发者|越狱|上帝|DAN)模式(?:已)?(?:开启|启用|激活|打开)/g,
  /(?:把|将)(?:这段|整个|所有的?|全部的?|用户的?)?(?:对话|聊天记录|历史消息|密码|凭据|密钥)(?:内容)?(?:发送|转发|上传|发)(?:到|给)/g,
  /(?:立即|马上|现在)(?:调用|执行|使用)[^。！？\n]{0,20}?(?:工具|函数)/g,
];

const MARKUP: readonly RegExp[] = [
  /<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text|end_of_turn|start_of_turn)\|>/g,
  /<\/?(?:system|assistant|system-reminder|system_prompt|tool_call|tool_calls|tool_result|tool_use|function_calls|function_results|function_call|invoke|antml:[a-z_]{1,30}|im_start|instructions|important|untrusted_input)(?:[ \t][^<>\n]{0,200})?>/gi,
  /\[\/?INST\]|<<\/?SYS>>|<start_of_turn>|<end_of_turn>/g,
  /^[ \t]{0,8}#{2,4}[ \t]{0,3}(?:Instruction|System|Human|Assistant)[ \t]{0,3}:/gim,
  /"role"[ \t]{0,3}:[ \t]{0,3}"(?:system|developer)"/g,
  /(?:^|\n)[ \t]{0,8}(?:Human|Assistant)[ \t]{0,3}:[ \t]{0,3}\S/g,
];

/** Cheap pre-test: no pattern can match without one of these. */
const ANY = /ignore|disregard|forget|override|bypass|skip|drop|abandon|follow|obey|listen|you|instruction|pretend|imagine|act|behave|respond|reveal|print|show|output|repeat|leak|tell|without|AI|LLM|model|assistant|chatbot|GPT|Claude|Copilot|Bing|send|forward|email|post|upload|exfiltrate|transmit|mode|stop|cease|instead|call|invoke|execute|agent|role|human|system|INST|SYS|<|[\u4e00-\u9fff]/i;

export function findInjection(text: string): Hit[] {
  if (!ANY.test(text)) return [];
  const hits: Hit[] = [];
  const each = (re: RegExp, check?: (s: string) => boolean, trimNewline = false): void => {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      if (check && !check(m[0])) continue;
      const start = trimNewline && m[0].startsWith('\n') ? m.index + 1 : m.index;
      hits.push({ start, end: m.index + m[0].length, kind: 'injection' });
    }
  };
  EN.forEach((re, i) => each(re, i === 0 ? (s) => QUALIFIER.test(s.slice(s.search(/[ \t]/))) : undefined));
  if (/[\u4e00-\u9fff]/.test(text)) ZH.forEach((re, i) => each(re, i === 0 ? (s) => ZH_QUALIFIER.test(s) : undefined));
  for (const re of MARKUP) each(re, undefined, true);
  return resolveOverlaps(hits);
}

export function scanInjection(text: string, action: InjectionAction): TextScan {
  return scanOf(text, findInjection(text), action, false);
}

export const injectionGuard = (action: InjectionAction): TextGuard => ({
  name: 'injection',
  scan: (text) => scanInjection(text, action),
});
