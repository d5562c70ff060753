import { parentPort, workerData } from 'node:worker_threads';
import { parseText, type TextItem } from './parse-pool.js';

/** A parse-pool worker: parses the texts it was given and posts the plain values back. */
parentPort?.postMessage((workerData as TextItem[]).map(parseText));
